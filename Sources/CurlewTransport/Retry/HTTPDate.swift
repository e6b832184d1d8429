import Foundation

/// Reads an HTTP date (RFC 9110 §5.6.7) in any of the three forms recipients must accept. No I/O.
///
/// - IMF-fixdate, the form senders use: `Sun, 06 Nov 1994 08:49:37 GMT`;
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`, whose two-digit year is the nearest one not more
///   than 50 years after `now` (RFC 9110's rule);
/// - asctime: `Sun Nov  6 08:49:37 1994`.
///
/// Whitespace around the value is ignored; anything else out of the grammar (another zone than
/// `GMT`, a day the month does not have, a text longer than ``maximumLength``) is not a date.
/// Linear in the text and reads at most ``maximumLength`` bytes of it.
package enum HTTPDate {
    /// The longest text read: the longest valid form, the RFC 850 one, has 33 bytes.
    package static let maximumLength = 64

    private static let months: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }
    private static let shortDays: [[UInt8]] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDays: [[UInt8]] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        .map { Array($0.utf8) }

    /// The instant `text` names, or `nil` when it is not an HTTP date.
    ///
    /// - Parameters:
    ///   - text: A field value such as `Expires` or `Retry-After`.
    ///   - now: The present, which only an RFC 850 date's two-digit year needs.
    package static func parse(_ text: some StringProtocol, now: Date) -> Date? {
        var bytes = Array(text.utf8.prefix(Self.maximumLength + 1))
        guard bytes.count <= Self.maximumLength else { return nil }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes.removeLast() }
        let start = bytes.firstIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") } ?? bytes.endIndex
        var scanner = Scanner(bytes: bytes[start...])
        if let comma = bytes[start...].firstIndex(of: UInt8(ascii: ",")) {
            let dayName = Array(bytes[start..<comma])
            if Self.shortDays.contains(dayName) { return Self.imfFixdate(&scanner) }
            if Self.longDays.contains(dayName) { return Self.rfc850(&scanner, now: now) }
            return nil
        }
        return Self.asctime(&scanner)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    private static func imfFixdate(_ scanner: inout Scanner) -> Date? {
        guard scanner.skip(while: { $0 != UInt8(ascii: ",") }), scanner.expect(", "),
              let day = scanner.digits(2), scanner.expect(" "), let month = scanner.month(), scanner.expect(" "),
              let year = scanner.digits(4), scanner.expect(" "), let time = scanner.timeOfDay(),
              scanner.expect(" GMT"), scanner.isAtEnd else { return nil }
        return Self.date(year: year, month: month, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`.
    private static func rfc850(_ scanner: inout Scanner, now: Date) -> Date? {
        guard scanner.skip(while: { $0 != UInt8(ascii: ",") }), scanner.expect(", "),
              let day = scanner.digits(2), scanner.expect("-"), let month = scanner.month(), scanner.expect("-"),
              let shortYear = scanner.digits(2), scanner.expect(" "), let time = scanner.timeOfDay(),
              scanner.expect(" GMT"), scanner.isAtEnd else { return nil }
        // The year with these last two digits that is not more than 50 years in the future.
        let currentYear = Self.civilYear(of: now)
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return Self.date(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994` (a one-digit day is padded with a space).
    private static func asctime(_ scanner: inout Scanner) -> Date? {
        guard let dayName = scanner.take(3), Self.shortDays.contains(dayName), scanner.expect(" "),
              let month = scanner.month(), scanner.expect(" ") else { return nil }
        let day: Int
        if scanner.expect(" ") {
            guard let digit = scanner.digits(1) else { return nil }
            day = digit
        } else {
            guard let digits = scanner.digits(2) else { return nil }
            day = digits
        }
        guard scanner.expect(" "), let time = scanner.timeOfDay(), scanner.expect(" "),
              let year = scanner.digits(4), scanner.isAtEnd else { return nil }
        return Self.date(year: year, month: month, day: day, time: time)
    }

    /// The instant, or `nil` for a day the month does not have or a time out of range (a leap
    /// second, `:60`, is accepted as IMF allows it).
    private static func date(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Date? {
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthLengths = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...monthLengths[month - 1]).contains(day),
              (0...23).contains(time.hour), (0...59).contains(time.minute), (0...60).contains(time.second) else {
            return nil
        }
        let days = Self.daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(time.hour * 3600 + time.minute * 60 + time.second)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Howard Hinnant's `days_from_civil`.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthIndex + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian year (UTC) of `date`: Howard Hinnant's `civil_from_days`, year only.
    private static func civilYear(of date: Date) -> Int {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        return Int(yearOfEra + era * 400 + (monthPrime >= 10 ? 1 : 0))
    }

    /// Reads the bytes of a date from left to right.
    private struct Scanner {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { self.bytes.isEmpty }

        /// Consumes `literal` if the bytes start with it.
        mutating func expect(_ literal: StaticString) -> Bool {
            let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
            guard self.bytes.starts(with: expected) else { return false }
            self.bytes.removeFirst(expected.count)
            return true
        }

        /// Consumes bytes while `predicate` holds; `true` when something is left.
        mutating func skip(while predicate: (UInt8) -> Bool) -> Bool {
            while let first = self.bytes.first, predicate(first) { self.bytes.removeFirst() }
            return !self.bytes.isEmpty
        }

        mutating func take(_ count: Int) -> [UInt8]? {
            guard self.bytes.count >= count else { return nil }
            defer { self.bytes.removeFirst(count) }
            return Array(self.bytes.prefix(count))
        }

        /// Exactly `count` decimal digits.
        mutating func digits(_ count: Int) -> Int? {
            guard let taken = self.take(count) else { return nil }
            var value = 0
            for byte in taken {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }

        /// A month name, 1 to 12.
        mutating func month() -> Int? {
            guard let name = self.take(3), let index = HTTPDate.months.firstIndex(of: name) else { return nil }
            return index + 1
        }

        /// `hh:mm:ss`.
        mutating func timeOfDay() -> (hour: Int, minute: Int, second: Int)? {
            guard let hour = self.digits(2), self.expect(":"), let minute = self.digits(2), self.expect(":"),
                  let second = self.digits(2) else { return nil }
            return (hour, minute, second)
        }
    }
}
