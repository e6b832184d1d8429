import Foundation
internal import CCurl

/// Bodies streamed either way: binding the streams to the transfer, curl's pauses while a stream is
/// behind, and their end.
///
/// A stream that is behind makes curl's callback return its pause code (`CURL_WRITEFUNC_PAUSE` when
/// the consumer's buffer is full, `CURL_READFUNC_PAUSE` when the producer has nothing yet): curl
/// then holds that direction of the transfer and stops watching the socket for it. The stream calls
/// back, on any thread, once it can go on; the transfer carries that to the engine's context and lifts
/// the pause there with `curl_easy_pause`, inside one entry of the engine so that curl's "run me now"
/// timer is served in the same visit. curl does not count a paused transfer against the idle timeout.
extension Transfer {
    /// Whether the response body or the request body is a stream (such a transfer never pauses).
    var streams: Bool {
        if case .stream = self.request.destination { return true }
        if case .stream = self.request.body { return true }
        return false
    }

    /// Binds the request's streams to this transfer.
    /// - Throws: ``TransferError/Code/invalidRequest`` when the response stream already serves
    ///   another transfer, or the body stream is attached to another live one;
    ///   ``TransferError/Code/requestBodyStreamExhausted`` when the body stream was already read by one.
    func claimStreams() throws(TransferError) {
        if case .stream(let stream) = self.request.destination {
            let producer = ResponseBodyStream.Producer(
                resume: { [weak self] in self?.liftStreamPause(CURLPAUSE_RECV) },
                cancel: { [weak self] in self?.cancel() },
                owner: ObjectIdentifier(self))
            guard stream.claim(producer) else {
                throw TransferError(.invalidRequest, "A response body stream serves one transfer; this one already has one.")
            }
        }
        if case .stream(let stream) = self.request.body {
            let resume: @Sendable () -> Void = { [weak self] in self?.liftStreamPause(CURLPAUSE_SEND) }
            if let refusal = stream.attach(owner: ObjectIdentifier(self), resume: resume) { throw refusal }
        }
    }

    /// Whether the current attempt may send the request body again from its start: not a stream
    /// that has handed out bytes.
    var canResendBody: Bool {
        guard case .stream(let stream) = self.request.body else { return true }
        return !stream.hasStarted
    }

    /// Called by a stream that can go on: lifts curl's pause of `direction` on the context.
    private func liftStreamPause(_ direction: Int32) {
        self.onContext { $0.contextLiftStreamPause(direction) }
    }

    private func contextLiftStreamPause(_ direction: Int32) {
        guard self.streamPauses & direction != 0 else { return }
        self.streamPauses &= ~direction
        guard let easy = self.easy, self.machine.isRunning else { return }
        // curl may call the write or read callback again from inside this call, which may pause again.
        _ = curl_easy_pause(easy.raw, self.streamPauses)
    }

    /// A held challenge turned out to be the response (its body came, or the transfer ended): the
    /// stream's consumer gets its head.
    func publishHeldStreamHead() {
        guard let held = self.heldStreamHead else { return }
        self.heldStreamHead = nil
        if case .stream(let stream) = self.request.destination { stream.receiveHead(held.head, url: held.url) }
    }

    /// curl's callback pauses `direction` because a stream is behind.
    func holdForStream(_ direction: Int32) {
        self.streamPauses |= direction
    }

    /// Tells the streams how the transfer ended (the response stream's consumer reads what is
    /// buffered, then the end or the error); a new attempt starts with no pause held.
    func endStreams(_ outcome: Result<TransferResponse, TransferError>) {
        self.streamPauses = 0
        let error: TransferError?
        switch outcome {
        case .success:
            error = nil
            self.publishHeldStreamHead()
        case .failure(let failure):
            error = failure
            self.heldStreamHead = nil
        }
        // Streams this transfer was refused (another transfer has them) are left alone.
        if case .stream(let stream) = self.request.destination { stream.finish(error, owner: ObjectIdentifier(self)) }
        if case .stream(let stream) = self.request.body { stream.transferEnded(error, owner: ObjectIdentifier(self)) }
    }
}
