import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The lessons' server: the test process's shared one (127.0.0.1 only).
func server() throws -> TestServer { try testServer() }

/// Runs `action` on a thread of its own as soon as `condition` holds (polled there, blocking that
/// thread only), or gives up after `timeout`. For the steps of a lesson that must follow each other
/// closely: a test task's polls are wake-ups on the cooperative pool, which a loaded machine (other
/// tests' child processes under ThreadSanitizer) delays by seconds.
func onOwnThread(when condition: @escaping @Sendable () -> Bool, timeout: Duration = defaultTestTimeout,
                 _ action: @escaping @Sendable () -> Void) {
    let thread = Thread {
        if blockingWaitUntil(timeout: timeout, condition) { action() }
    }
    thread.name = "lesson-step"
    thread.start()
}

/// A delegate that notes which thread each call ran on and waits for the end.
final class ThreadNotingDelegate: TransferDelegate, Sendable {
    let threads = Locked<[Int32]>([])
    let result = Locked<Result<TransferResponse, TransferError>?>(nil)

    private func note() {
        if let id = ProcessInspector.currentThreadID() {
            self.threads.withLock { $0.append(id) }
        }
    }

    func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) { self.note() }
    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) { self.note() }
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.note()
        self.result.set(result)
    }

    var isDone: Bool { self.result.value != nil }
}
