import Foundation

/// Reads a `Retry-After` value (RFC 9110 §10.2.3): a number of seconds, or an HTTP date. No I/O.
enum RetryAfter {
    /// The wait `value` asks for at `now`: its seconds, or the time until its date (zero for a date
    /// past). `nil` for anything else.
    static func parse(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // An absurd number of seconds is still a very long wait.
            return .seconds(Int64(trimmed.prefix(12)) ?? .max)
        }
        guard let date = self.date(trimmed) else { return nil }
        let interval = date.timeIntervalSince(now)
        return interval > 0 ? .milliseconds(Int64((interval * 1000).rounded(.up))) : .zero
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// An IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT` (the form RFC 9110 requires senders to use).
    static func date(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int(parts[1]), parts[1].count == 2, (1...31).contains(day),
              let month = Self.months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]), parts[3].count == 4 else { return nil }
        let time = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, time.allSatisfy({ $0.count == 2 }),
              let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "GMT")
        components.year = year
        components.month = month + 1
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        guard components.isValidDate else { return nil }
        return components.date
    }
}
