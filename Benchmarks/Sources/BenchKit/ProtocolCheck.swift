import Foundation

/// For `h2`: counts successful responses that did not arrive over HTTP/2, so a client that quietly
/// fell back to HTTP/1.1 says so in its note. Does nothing for the other scenarios.
///
/// `@unchecked Sendable`: `mismatches` is guarded by `lock`.
public final class ProtocolCheck: @unchecked Sendable {
    /// Whether the scenario asks for HTTP/2.
    public let expectsHTTP2: Bool
    private let lock = NSLock()
    private var mismatches = 0

    /// Creates a check for `options.scenario`.
    public init(_ options: BenchOptions) {
        self.expectsHTTP2 = options.scenario == .h2
    }

    /// Records one successful response's protocol.
    @inline(__always)
    public func record(isHTTP2: Bool) {
        guard self.expectsHTTP2, !isHTTP2 else { return }
        self.lock.lock()
        self.mismatches += 1
        self.lock.unlock()
    }

    /// A remark when some responses were not HTTP/2; `nil` otherwise.
    public var note: String? {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.mismatches > 0 ? "\(self.mismatches) responses (warm-up included) did not use HTTP/2" : nil
    }

    /// `base` and this check's remark, joined.
    public func note(adding base: String?) -> String? {
        let parts = [base, self.note].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
