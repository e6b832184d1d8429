import Foundation

extension RequestOperationManager {
    /// Shuts the manager down once what it runs has finished: from now on it takes no request (new
    /// ones fail at once with a cancellation, as after ``shutdown()``), lets those in flight end as
    /// they would — retries and waits included, queued operations started — then shuts down as
    /// ``shutdown()`` does.
    ///
    /// Cancelling the calling task cancels the requests still running, each finishing once with a
    /// cancellation error, so a deadline on the task bounds the wait (swift-service-lifecycle's
    /// `maximumGracefulShutdownDuration` does exactly that for the manager as a `Service`).
    public func shutdownGracefully() async {
        self.settings.withLock { $0.isShutDown = true }
        await withTaskCancellationHandler {
            await self.runs.drain()
            self.operationQueue.isSuspended = false  // a suspended queue would never reach the barrier
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                self.operationQueue.addBarrierBlock { continuation.resume() }
            }
        } onCancel: {
            self.runs.cancelAll()
            self.operationQueue.cancelAllOperations()
        }
        await self.shutdown()
    }
}
