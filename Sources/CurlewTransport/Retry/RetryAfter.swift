import Foundation

/// Reads a `Retry-After` value (RFC 9110 §10.2.3): a number of seconds, or an HTTP date in any of
/// its three forms (``HTTPDate``). No I/O.
enum RetryAfter {
    /// The wait `value` asks for at `now`: its seconds, or the time until its date (zero for a date
    /// past). `nil` for anything else.
    static func parse(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // An absurd number of seconds is still a very long wait.
            return .seconds(Int64(trimmed.prefix(12)) ?? .max)
        }
        guard let date = HTTPDate.parse(trimmed, now: now) else { return nil }
        let interval = date.timeIntervalSince(now)
        return interval > 0 ? .milliseconds(Int64((interval * 1000).rounded(.up))) : .zero
    }
}
