import Foundation

extension TransferEngine {
    /// Starts `request` and returns as soon as the final response's head arrived, with the body
    /// still arriving as an `AsyncSequence` of chunks (see ``ResponseBodyStream``).
    ///
    /// ```swift
    /// let response = try await engine.stream(TransferRequest(url: eventsURL))
    /// for try await chunk in response.body { parse(chunk) }   // memory stays bounded
    /// ```
    ///
    /// Cancelling the calling task before the head arrived cancels the transfer; afterwards, the body
    /// belongs to whoever reads it: cancelling the reading task, or dropping the body before its end,
    /// cancels the transfer. The request's own ``TransferRequest/destination`` is replaced.
    ///
    /// - Parameters:
    ///   - request: What to send; its body may be a stream too.
    ///   - bufferSize: How many bytes may wait for the reader before curl is paused.
    /// - Returns: The head, the URL it came from, and the body.
    /// - Throws: ``TransferError`` when the transfer fails before a head arrived.
    public func stream(
        _ request: TransferRequest, bufferSize: Int = ResponseBodyStream.defaultBufferSize
    ) async throws(TransferError) -> StreamedResponse {
        let stream = ResponseBodyStream(bufferSize: bufferSize)
        var request = request
        request.destination = .stream(stream)
        let transfer = self.makeTransfer(request)
        transfer.start()
        let (head, url) = try await stream.head()
        return StreamedResponse(head: head, url: url, body: stream.body)
    }
}
