import Foundation

/// The body a request sends.
public enum RequestBody: Sendable, Hashable {
    /// Bytes in memory.
    case data(Data)
    /// The contents of a file, streamed as curl asks for it (never loaded whole).
    case file(URL)
}

/// Where a response body goes.
public enum ResponseDestination: Sendable, Hashable {
    /// Collected in memory, delivered as ``TransferResponse/body``.
    case memory
    /// Streamed to this file. The body is written to a temporary file beside it, which replaces the
    /// destination only when the transfer succeeds; a failed or cancelled transfer leaves no file.
    case file(URL)
}
