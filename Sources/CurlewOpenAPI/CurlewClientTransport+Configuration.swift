import Curlew

extension CurlewClientTransport {
    /// How a ``CurlewClientTransport`` sends request bodies and receives response bodies.
    public struct Configuration: Sendable, Hashable {
        /// Request bodies of known length up to this many bytes are read into memory before the
        /// request is sent, so that a retry or a redirect that keeps the body can send them again;
        /// longer ones, and those of unknown length, are streamed and never sent twice (see
        /// `RequestBodyStream`).
        /// 1 MiB by default; 0 streams every body that has bytes.
        public var maximumCollectedRequestBodySize: Int64 = 1 << 20
        /// How many bytes of a streamed request body may wait for curl before the body is asked for
        /// no more (`RequestBodyStream/bufferSize`); 256 KiB by default.
        public var requestBufferSize: Int = RequestBodyStream.defaultBufferSize
        /// How many bytes of a response body may wait for the reader before the transfer pauses
        /// (`ResponseBodyStream/bufferSize`): what memory a slow reader costs. 1 MiB by default.
        public var responseBufferSize: Int = ResponseBodyStream.defaultBufferSize

        /// Creates the default configuration.
        public init() {}
    }
}
