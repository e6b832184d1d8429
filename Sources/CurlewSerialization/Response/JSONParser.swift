import Foundation

/// Parses JSON text into a ``JSONValue`` in one pass with an explicit stack: linear in the input,
/// with limits on nesting and on the number of values.
///
/// It reads JSON as Foundation's `JSONDecoder` does, so that ``JSONResponseSerializer`` accepts and
/// refuses the same documents: UTF-8, or UTF-16 and UTF-32 told apart by a byte-order mark or the
/// zero bytes of the first characters; trailing commas allowed in arrays and objects; any value at
/// the top level; the first of two equal keys kept; a number is an ``JSONValue/integer(_:)`` when
/// `Int` can hold its value (`2`, `2.0`, `2e0`), else a ``JSONValue/double(_:)``. Decoding
/// ``JSONValue`` through `JSONDecoder` instead costs time proportional to the values times their
/// depth (each failed type guess builds an error carrying its coding path).
struct JSONParser {
    /// Why the text was refused.
    enum Failure: Error {
        /// Not JSON: what was wrong, and the keys and indices of the containers it was in.
        case malformed(String, codingPath: [String])
        /// Arrays and objects nested deeper than the limit.
        case nestingTooDeep
        /// More values than the limit.
        case tooManyNodes
    }

    /// The deepest nesting of arrays and objects accepted.
    let maximumDepth: Int
    /// The most values accepted (each array, object, string, number, Boolean and null).
    let maximumNodeCount: Int

    /// The value `data` holds.
    func parse(_ data: Data) throws(Failure) -> JSONValue {
        let result = Self.withUTF8(data) { (bytes: UnsafeRawBufferPointer) -> Result<JSONValue, Failure> in
            var reader = Reader(bytes: bytes, limits: self)
            return Result { () throws(Failure) -> JSONValue in try reader.document() }
        }
        guard let result else { throw .malformed("The text is not valid UTF-8, UTF-16 or UTF-32.", codingPath: []) }
        return try result.get()
    }

    /// Calls `body` with the UTF-8 of `data`, transcoded from UTF-16 or UTF-32 as `JSONDecoder`
    /// detects them, and without a byte-order mark; `nil` when the text does not transcode.
    static func withUTF8<T>(_ data: Data, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
        let head = Array(data.prefix(4))
        let byte = { (index: Int) -> UInt8? in index < head.count ? head[index] : nil }
        let encoding: String.Encoding
        let bom: Int
        switch (byte(0), byte(1), byte(2), byte(3)) {
        case (0, 0, 0xFE, 0xFF): (encoding, bom) = (.utf32BigEndian, 4)
        case (0xFE, 0xFF, 0, 0): (encoding, bom) = (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): (encoding, bom) = (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): (encoding, bom) = (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): (encoding, bom) = (.utf8, 3)
        case (0, 0, 0, let last?) where last != 0: (encoding, bom) = (.utf32BigEndian, 0)
        case (0, let first?, 0, let second?) where first != 0 && second != 0: (encoding, bom) = (.utf16BigEndian, 0)
        case (let first?, 0, 0, 0) where first != 0: (encoding, bom) = (.utf32LittleEndian, 0)
        case (let first?, 0, let second?, 0) where first != 0 && second != 0: (encoding, bom) = (.utf16LittleEndian, 0)
        case (0, let only?, nil, nil) where only != 0: (encoding, bom) = (.utf16BigEndian, 0)
        case (let only?, 0, nil, nil) where only != 0: (encoding, bom) = (.utf16LittleEndian, 0)
        default: (encoding, bom) = (.utf8, 0)
        }
        let text = data.dropFirst(bom)
        if encoding == .utf8 {
            return text.withUnsafeBytes(body)
        }
        guard var string = String(bytes: text, encoding: encoding) else { return nil }
        return string.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    // MARK: Reading

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let limits: JSONParser
        var index = 0
        var nodes = 0
        /// Open containers, innermost last, with their contents so far; appended to in place.
        var kinds: [Bool] = []   // true: an object
        var arrays: [[JSONValue]] = []
        var objects: [[String: JSONValue]] = []
        var keys: [String] = []

        init(bytes: UnsafeRawBufferPointer, limits: JSONParser) {
            self.bytes = bytes
            self.limits = limits
        }

        mutating func document() throws(Failure) -> JSONValue {
            var value = try self.valueOrOpenContainer()
            while true {
                guard let value2 = value else {
                    value = try self.valueOrOpenContainer()
                    continue
                }
                guard let isObject = self.kinds.last else {
                    self.skipSpace()
                    guard self.index == self.bytes.count else { throw self.malformed("Unexpected text after the top-level value") }
                    return value2
                }
                if isObject {
                    let key = self.keys.removeLast()
                    if self.objects[self.objects.count - 1][key] == nil {
                        self.objects[self.objects.count - 1][key] = value2
                    }
                } else {
                    self.arrays[self.arrays.count - 1].append(value2)
                }
                value = try self.afterMember(isObject: isObject)
            }
        }

        /// After a member of the innermost container: `,` and the next member (`nil`, its value
        /// still to read), or the close and the container's value.
        mutating func afterMember(isObject: Bool) throws(Failure) -> JSONValue? {
            self.skipSpace()
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            guard let byte = self.peek() else { throw self.malformed("Unexpected end of text in \(isObject ? "an object" : "an array")") }
            if byte == UInt8(ascii: ",") {
                self.index += 1
                self.skipSpace()
                if self.peek() == close {
                    self.index += 1
                    return self.closeContainer()
                }
                if isObject {
                    try self.readKey()
                }
                return nil
            }
            guard byte == close else { throw self.malformed("Expected ',' or '\(Character(Unicode.Scalar(close)))'") }
            self.index += 1
            return self.closeContainer()
        }

        mutating func closeContainer() -> JSONValue {
            if self.kinds.removeLast() {
                return .object(self.objects.removeLast())
            }
            return .array(self.arrays.removeLast())
        }

        /// A whole scalar or empty container, or `nil` after opening a container (whose first
        /// member's value comes next).
        mutating func valueOrOpenContainer() throws(Failure) -> JSONValue? {
            self.skipSpace()
            guard let byte = self.peek() else { throw self.malformed("Unexpected end of text") }
            try self.countNode()
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard self.kinds.count < self.limits.maximumDepth else { throw .nestingTooDeep }
                let isObject = byte == UInt8(ascii: "{")
                self.index += 1
                self.skipSpace()
                if self.peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    self.index += 1
                    return isObject ? .object([:]) : .array([])
                }
                self.kinds.append(isObject)
                if isObject {
                    self.objects.append([:])
                    try self.readKey()
                } else {
                    self.arrays.append([])
                }
                return nil
            case UInt8(ascii: "\""):
                return .string(try self.string())
            case UInt8(ascii: "t"):
                try self.literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try self.literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try self.literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try self.number()
            default:
                throw self.malformed("Unexpected character '\(Self.describe(byte))'")
            }
        }

        mutating func countNode() throws(Failure) {
            self.nodes += 1
            guard self.nodes <= self.limits.maximumNodeCount else { throw .tooManyNodes }
        }

        /// An object's key and its `:`.
        mutating func readKey() throws(Failure) {
            guard self.peek() == UInt8(ascii: "\"") else { throw self.malformed("Expected a key in quotes") }
            let key = try self.string()
            self.skipSpace()
            guard self.peek() == UInt8(ascii: ":") else { throw self.malformed("Expected ':' after the key \"\(key)\"") }
            self.index += 1
            self.keys.append(key)
        }

        mutating func literal(_ word: StaticString) throws(Failure) {
            let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard word.utf8CodeUnitCount <= self.bytes.count - self.index,
                  self.bytes[self.index..<self.index + expected.count].elementsEqual(expected) else {
                throw self.malformed("Expected \(word)")
            }
            self.index += expected.count
        }

        // MARK: Strings

        /// A string from its opening quote: UTF-8 validated, escapes decoded, no raw control
        /// characters.
        mutating func string() throws(Failure) -> String {
            self.index += 1
            let start = self.index
            while self.index < self.bytes.count {
                let byte = self.bytes[self.index]
                if byte == UInt8(ascii: "\"") {
                    guard let text = String(validating: self.bytes[start..<self.index], as: UTF8.self) else {
                        throw self.malformed("A string is not valid UTF-8")
                    }
                    self.index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                self.index += 1
            }
            var utf8 = Array(self.bytes[start..<self.index])
            while self.index < self.bytes.count {
                let byte = self.bytes[self.index]
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: utf8, as: UTF8.self) else { throw self.malformed("A string is not valid UTF-8") }
                    self.index += 1
                    return text
                case UInt8(ascii: "\\"):
                    self.index += 1
                    try self.escape(into: &utf8)
                case 0..<0x20:
                    throw self.malformed("A control character in a string")
                default:
                    utf8.append(byte)
                    self.index += 1
                }
            }
            throw self.malformed("Unexpected end of text in a string")
        }

        /// The escape after a backslash.
        mutating func escape(into utf8: inout [UInt8]) throws(Failure) {
            guard let byte = self.peek() else { throw self.malformed("Unexpected end of text in a string") }
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                let unit = try self.hexUnit()
                var scalar = Unicode.Scalar(unit)
                if UTF16.isLeadSurrogate(unit) {
                    guard self.bytes.hasBytes(Self.unicodeEscape, at: self.index) else {
                        throw self.malformed("A high surrogate without a low one")
                    }
                    self.index += 2
                    let low = try self.hexUnit()
                    guard UTF16.isTrailSurrogate(low) else { throw self.malformed("A high surrogate without a low one") }
                    scalar = Unicode.Scalar(0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00))
                }
                guard let scalar else { throw self.malformed("A lone low surrogate") }
                UTF8.encode(scalar) { utf8.append($0) }
            default:
                throw self.malformed("Unknown escape '\\\(Self.describe(byte))'")
            }
        }

        private static let unicodeEscape = Array("\\u".utf8)

        mutating func hexUnit() throws(Failure) -> UInt16 {
            guard self.bytes.count - self.index >= 4 else { throw self.malformed("Unexpected end of text in a \\u escape") }
            var unit: UInt16 = 0
            for byte in self.bytes[self.index..<self.index + 4] {
                guard let digit = Self.hexDigit(byte) else { throw self.malformed("Invalid hexadecimal digit in a \\u escape") }
                unit = unit << 4 | UInt16(digit)
            }
            self.index += 4
            return unit
        }

        static func hexDigit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        // MARK: Numbers

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, then its value as `JSONDecoder`
        /// gives it to ``JSONValue``.
        mutating func number() throws(Failure) -> JSONValue {
            let start = self.index
            if self.peek() == UInt8(ascii: "-") { self.index += 1 }
            let integerStart = self.index
            guard self.skipDigits() > 0 else { throw self.malformed("A number without digits") }
            if self.bytes[integerStart] == UInt8(ascii: "0"), self.index - integerStart > 1 {
                throw self.malformed("A number with a leading zero")
            }
            var plain = true
            if self.peek() == UInt8(ascii: ".") {
                self.index += 1
                plain = false
                guard self.skipDigits() > 0 else { throw self.malformed("A number without digits after '.'") }
            }
            if self.peek() == UInt8(ascii: "e") || self.peek() == UInt8(ascii: "E") {
                self.index += 1
                plain = false
                if self.peek() == UInt8(ascii: "+") || self.peek() == UInt8(ascii: "-") { self.index += 1 }
                guard self.skipDigits() > 0 else { throw self.malformed("A number without digits in its exponent") }
            }
            if let next = self.peek(), next == UInt8(ascii: ".") || next == UInt8(ascii: "+") || next == UInt8(ascii: "-")
                || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
                throw self.malformed("Unexpected '\(Self.describe(next))' in a number")
            }
            let token = self.bytes[start..<self.index]
            if plain, let integer = Self.integer(token) {
                return .integer(integer)
            }
            let text = String(decoding: token, as: UTF8.self)
            guard let double = Double(text), double.isFinite else { throw self.malformed("The number \(text) does not fit a Double") }
            // As JSONDecoder decodes Int: any integral Double below 2⁵³ is an Int (so 1e-400,
            // which rounds to 0, is 0); above, only a literal whose exact value is an integer.
            if let integer = Int(exactly: double) {
                if double.magnitude < 0x1p53 {
                    return .integer(integer)
                }
                if let exact = Self.exactInteger(token) {
                    return .integer(exact)
                }
            }
            return .double(double)
        }

        mutating func skipDigits() -> Int {
            let start = self.index
            while let byte = self.peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { self.index += 1 }
            return self.index - start
        }

        /// A plain integer literal's value, if it fits `Int`.
        static func integer(_ token: Slice<UnsafeRawBufferPointer>) -> Int? {
            let negative = token.first == UInt8(ascii: "-")
            var magnitude: UInt64 = 0
            for byte in token.dropFirst(negative ? 1 : 0) {
                let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflow, !overflow2 else { return nil }
                magnitude = sum
            }
            if negative {
                return magnitude <= UInt64(Int.max) + 1 ? Int(truncatingIfNeeded: 0 &- magnitude) : nil
            }
            return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
        }

        /// The exact value of a validated number literal with a fraction or exponent, when it is an
        /// integer that fits `Int`.
        static func exactInteger(_ token: Slice<UnsafeRawBufferPointer>) -> Int? {
            let negative = token.first == UInt8(ascii: "-")
            var digits: [UInt8] = []
            var pointPosition: Int?
            var leadingFractionZeros = 0
            var exponent = 0
            var index = token.startIndex + (negative ? 1 : 0)
            scan: while index < token.endIndex {
                let byte = token[index]
                switch byte {
                case UInt8(ascii: "."):
                    pointPosition = digits.count
                case UInt8(ascii: "e"), UInt8(ascii: "E"):
                    let rest = token[(index + 1)...]
                    for digit in rest where digit != UInt8(ascii: "+") && digit != UInt8(ascii: "-") {
                        exponent = min(exponent * 10 + Int(digit - UInt8(ascii: "0")), 1_000)
                    }
                    if rest.first == UInt8(ascii: "-") { exponent = -exponent }
                    break scan
                case UInt8(ascii: "0") where digits.isEmpty:
                    // Leading zeros: nothing before the point; after it, each moves the digits right.
                    if pointPosition != nil { leadingFractionZeros += 1 }
                default:
                    digits.append(byte - UInt8(ascii: "0"))
                }
                index += 1
            }
            // The value is 0.digits × 10^integerDigits: the digits past integerDigits are the fraction.
            let integerDigits = (pointPosition ?? digits.count) - leadingFractionZeros + exponent
            guard integerDigits >= 0, integerDigits <= 20, digits[min(integerDigits, digits.count)...].allSatisfy({ $0 == 0 }) else {
                return nil
            }
            var magnitude: UInt64 = 0
            for position in 0..<integerDigits {
                let digit = position < digits.count ? UInt64(digits[position]) : 0
                let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(digit)
                guard !overflow, !overflow2 else { return nil }
                magnitude = sum
            }
            if negative {
                return magnitude <= UInt64(Int.max) + 1 ? Int(truncatingIfNeeded: 0 &- magnitude) : nil
            }
            return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
        }

        // MARK: Bytes

        func peek() -> UInt8? {
            self.index < self.bytes.count ? self.bytes[self.index] : nil
        }

        /// JSON's white space: space, tab, LF, CR.
        mutating func skipSpace() {
            while self.index < self.bytes.count, UnsafeRawBufferPointer.isSpace(self.bytes[self.index]) { self.index += 1 }
        }

        /// A malformed-text failure at the current position, with the path of open containers.
        func malformed(_ description: String) -> Failure {
            var path: [String] = []
            var arrayIndex = 0
            var keyIndex = 0
            for isObject in self.kinds {
                if isObject {
                    if keyIndex < self.keys.count { path.append(self.keys[keyIndex]) }
                    keyIndex += 1
                } else {
                    path.append(String(self.arrays[arrayIndex].count))
                    arrayIndex += 1
                }
            }
            return .malformed("\(description) at byte \(self.index).", codingPath: path)
        }

        static func describe(_ byte: UInt8) -> String {
            byte >= 0x20 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : String(format: "0x%02X", byte)
        }
    }
}
