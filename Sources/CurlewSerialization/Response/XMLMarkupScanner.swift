import Foundation

/// What ``XMLResponseSerializer`` checks in the raw bytes before libxml2 sees them: the parts of a
/// document that libxml2 2.9 handles in more than linear time, or whose bytes would not say what
/// libxml2 reads.
///
/// - libxml2 compares each attribute of a start tag with every earlier one (quadratic: 100,000
///   attributes in one 1 MB tag take seconds), before any delegate callback could stop it; so the
///   attributes of every start tag are counted here first.
/// - A DTD can declare default attributes that libxml2 adds to every element (quadratically
///   again) and entities that expand into markup no byte shows; so a document that declares
///   either (`<!ATTLIST`, `<!ENTITY`, anywhere in it) is refused. Looking for the declarations
///   themselves rather than for an internal subset is what makes this sound: libxml2 recovers
///   from a broken `DOCTYPE` in ways a byte scan cannot follow (a quoted literal cut short by a
///   bad character still opens the subset at the next `[`). (`XMLParser` on Linux drops the text
///   of internal entities anyway.)
/// - Counting bytes is only sound when markup characters are ASCII bytes: the document must be
///   UTF-8, UTF-16 or one of the encodings ``XMLDeclaration/isASCIITransparent(_:)`` accepts; any
///   other (UTF-7, EBCDIC, UCS-4, Shift_JIS…) is refused.
/// - FoundationXML force-unwraps the names, comments and processing instructions libxml2 hands it
///   as UTF-8, and libxml2 passes some bytes on as they are: a comment holding a byte that is not
///   UTF-8 (`<x><!-- \u{FF} --></x>`, 14 bytes) crashed the process. So libxml2 only ever gets
///   valid UTF-8 or UTF-16: a document in a single-byte code page that is not valid UTF-8 as it
///   stands is decoded here and declared UTF-8 (libxml2 would read it as UTF-8 whenever it missed a
///   malformed declaration), and anything else that is not valid UTF-8, or UTF-16 with a lone
///   surrogate, is refused.
/// - FoundationXML also reads a processing instruction's data without checking for none: `<?pi?>`
///   (13 bytes with its element, well-formed XML) crashed the process. A `<?` followed by anything
///   but white space up to a `?>` is refused, wherever it is (libxml2 may read one in a comment it
///   gave up on).
///
/// The scan is linear in the body and uses no recursion. It never counts fewer attributes than
/// libxml2 reads, even where libxml2 recovers from errors (see `scanMarkup`); it may count more in a
/// comment or CDATA section full of `=`.
struct XMLMarkupScanner {
    /// Why a document is refused.
    enum Refusal: Error, Equatable {
        /// The encoding (as declared or detected) is not one the scan can read.
        case unsupportedEncoding(String)
        /// The document declares entities or attributes.
        case declarations
        /// A start tag has more attributes than the limit.
        case tooManyAttributes
        /// A document read as UTF-8 holds bytes that are not UTF-8.
        case invalidUTF8
        /// A processing instruction has no data.
        case emptyProcessingInstruction
    }

    /// The most attributes accepted in one start tag.
    let maximumAttributeCount: Int

    /// The bytes to give libxml2 (the body itself, or transcoded to UTF-8), or why none may go.
    func prepared(_ body: Data) -> Result<Data, Refusal> {
        body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Result<Data, Refusal> in
            switch Self.detectEncoding(bytes) {
            case .refused(let name):
                return .failure(.unsupportedEncoding(name))
            case .asciiCompatible(let offset):
                let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                if let name = XMLDeclaration.encodings(in: rest).first(where: { !XMLDeclaration.isASCIITransparent($0) }) {
                    return .failure(.unsupportedEncoding(name))
                }
                if Self.isValidUTF8(rest) {
                    return self.scanMarkup(rest).map { .failure($0) } ?? .success(body)
                }
                guard let utf8 = Self.transcodedToUTF8(rest) else { return .failure(.invalidUTF8) }
                return utf8.withUnsafeBytes { self.scanMarkup($0) }.map { .failure($0) } ?? .success(utf8)
            case .utf16(let bigEndian, let offset):
                let units = stride(from: offset, to: bytes.count - 1, by: 2).map { (index: Int) -> UInt16 in
                    let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
                    return UInt16(high) << 8 | UInt16(low)
                }
                guard Self.isValidUTF16(units) else { return .failure(.invalidUTF8) }
                let sameOrder = bigEndian ? "utf-16be" : "utf-16le"
                let refusal = Array(String(decoding: units, as: UTF16.self).utf8).withUnsafeBytes { utf8 -> Refusal? in
                    if let name = XMLDeclaration.encodings(in: utf8).first(where: { !["utf-16", "utf16", sameOrder].contains($0.lowercased()) }) {
                        return .unsupportedEncoding(name)
                    }
                    return self.scanMarkup(utf8)
                }
                return refusal.map { .failure($0) } ?? .success(body)
            }
        }
    }

    /// A document in a single-byte code page, decoded here and declared UTF-8: libxml2 would
    /// read it as UTF-8 (and pass bytes on as they are) whenever it misses the declaration.
    /// `nil` unless exactly one encoding is declared and Foundation decodes it.
    private static func transcodedToUTF8(_ bytes: UnsafeRawBufferPointer) -> Data? {
        let values = XMLDeclaration.encodingValues(in: bytes)
        guard values.count == 1, let value = values.first,
              let encoding = String.Encoding(ianaName: String(decoding: bytes[value], as: UTF8.self)) else {
            return nil
        }
        let declaredUTF8 = Data(bytes[..<value.lowerBound]) + Data("UTF-8".utf8) + Data(bytes[value.upperBound...])
        return String(data: declaredUTF8, encoding: encoding).map { Data($0.utf8) }
    }

    // MARK: Encoding

    private enum Encoding: Equatable {
        /// Markup is ASCII bytes (UTF-8 and ASCII supersets), from `offset` (after a BOM).
        case asciiCompatible(offset: Int)
        /// UTF-16, code units from `offset`.
        case utf16(bigEndian: Bool, offset: Int)
        /// libxml2 would read another encoding.
        case refused(String)
    }

    /// The encoding libxml2 detects from the first bytes (its `xmlDetectCharEncoding`).
    private static func detectEncoding(_ bytes: UnsafeRawBufferPointer) -> Encoding {
        let head = Array(bytes.prefix(4)) + [UInt8](repeating: 0xAA, count: max(0, 4 - bytes.count))
        switch (head[0], head[1], head[2], head[3]) {
        case (0x00, 0x00, 0xFE, 0xFF), (0xFF, 0xFE, 0x00, 0x00), (0x00, 0x00, 0x00, 0x3C), (0x3C, 0x00, 0x00, 0x00),
             (0x00, 0x00, 0x3C, 0x00), (0x00, 0x3C, 0x00, 0x00):
            return .refused("UCS-4")
        case (0x4C, 0x6F, 0xA7, 0x94):
            return .refused("EBCDIC")
        case (0xEF, 0xBB, 0xBF, _):
            return .asciiCompatible(offset: 3)
        case (0xFE, 0xFF, _, _):
            return .utf16(bigEndian: true, offset: 2)
        case (0xFF, 0xFE, _, _):
            return .utf16(bigEndian: false, offset: 2)
        case (0x00, 0x3C, 0x00, 0x3F):
            return .utf16(bigEndian: true, offset: 0)
        case (0x3C, 0x00, 0x3F, 0x00):
            return .utf16(bigEndian: false, offset: 0)
        default:
            return .asciiCompatible(offset: 0)
        }
    }

    /// Whether `bytes` are well-formed UTF-8 (no allocation).
    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Whether `units` are well-formed UTF-16 (no lone surrogates).
    private static func isValidUTF16(_ units: [UInt16]) -> Bool {
        var iterator = units.makeIterator()
        var decoder = UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    // MARK: Markup

    /// Refuses entity and attribute declarations, then counts the attributes after every `<`.
    ///
    /// `XMLParser` runs libxml2 in recovery mode, which goes on after errors, so the count does not
    /// trust comments or CDATA sections to end where they should: it starts at every `<` and runs
    /// to the next `>` outside quotes, or to the next `<` (an attribute value cannot hold one, and
    /// libxml2 ends the tag there). Each attribute libxml2 reads in that stretch has its own `=`
    /// outside quotes (it stops reading a tag's attributes at the first one out of shape), so the
    /// count is never below libxml2's; the stretches do not overlap, so the scan is linear.
    private func scanMarkup(_ bytes: UnsafeRawBufferPointer) -> Refusal? {
        let whole = 0..<bytes.count
        if bytes.firstIndex(of: Self.entityDeclaration, in: whole) != nil || bytes.firstIndex(of: Self.attributeDeclaration, in: whole) != nil {
            return .declarations
        }
        var index = 0
        while index < bytes.count, let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            if open + 1 < bytes.count, bytes[open + 1] == UInt8(ascii: "?"), Self.endsWithoutData(bytes, from: open + 2) {
                return .emptyProcessingInstruction
            }
            guard let end = Self.tagEnd(bytes, from: open + 1, maximumAttributeCount: self.maximumAttributeCount) else {
                return .tooManyAttributes
            }
            index = end
        }
        return nil
    }

    /// Whether a `?>` comes after `<?` at `start` before any white space (or `<`): a processing
    /// instruction whose target is all there is, which libxml2 reports with no data at all.
    private static func endsWithoutData(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        var index = start
        while index < bytes.count, !UnsafeRawBufferPointer.isSpace(bytes[index]), bytes[index] != UInt8(ascii: "<") {
            if bytes[index] == UInt8(ascii: "?"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ">") {
                return true
            }
            index += 1
        }
        return false
    }

    /// The index after a tag's `>` outside quotes, or of the next `<`; `nil` when the stretch has
    /// more than `limit` `=` outside quotes.
    private static func tagEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, maximumAttributeCount limit: Int) -> Int? {
        var quote: UInt8?
        var attributes = 0
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") { return index }
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            } else if byte == UInt8(ascii: "=") {
                attributes += 1
                if attributes > limit { return nil }
            }
            index += 1
        }
        return index
    }

    private static let entityDeclaration = Array("<!ENTITY".utf8)
    private static let attributeDeclaration = Array("<!ATTLIST".utf8)
}
