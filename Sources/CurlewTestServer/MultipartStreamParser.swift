#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Parses a `multipart/form-data` body as it streams in, keeping only a summary of each part (its
/// names, type, size and checksum): what `.multipart` echoes. Nothing of a part's content is
/// buffered, so a 1 GiB upload costs the server no memory.
///
/// The body is read as RFC 2046 frames it: anything before the first `--boundary` is preamble;
/// each boundary line is followed by the part's header lines and an empty line; the content runs
/// until CRLF `--boundary`; `--boundary--` ends the body. Every delimiter is therefore CRLF `--`
/// boundary, if the body is taken to start with a CRLF, which the parser feeds itself first.
/// Because the delimiter's first byte (CR) occurs nowhere else in it, a partial match that fails
/// is plain content and scanning restarts at the failing byte.
struct MultipartStreamParser {
    /// What the server reports for one part.
    struct Part: Hashable {
        var name: String?
        var filename: String?
        var contentType: String?
        var size = 0
        var checksum = FNV1a64()
    }

    private enum State {
        /// Before the first delimiter, or in a part's content: `matched` delimiter bytes seen.
        case preamble(matched: Int)
        case content(matched: Int)
        /// After a delimiter: `--` (the end) or CRLF (a part follows).
        case afterDelimiter([UInt8])
        /// A part's header block, until the empty line.
        case headers([UInt8])
        /// After the closing delimiter; the rest is ignored.
        case epilogue
        case failed(String)
    }

    /// The most header bytes one part may have.
    private static let maximumHeaderBytes = 16 * 1024

    private let delimiter: [UInt8]
    private let computesChecksums: Bool
    private var state = State.preamble(matched: 0)
    private(set) var parts: [Part] = []
    /// The part being read.
    private var current: Part?

    /// A parser for a request with this `Content-Type`; `nil` when it is not multipart with a boundary.
    init?(contentType: String, computesChecksums: Bool) {
        let lowered = contentType.lowercased()
        guard lowered.hasPrefix("multipart/"),
              let range = lowered.range(of: "boundary=") else { return nil }
        var boundary = contentType[range.upperBound...].prefix { $0 != ";" }
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 {
            boundary = boundary.dropFirst().dropLast()
        }
        guard !boundary.isEmpty, boundary.utf8.count <= 70 else { return nil }
        self.delimiter = Array("\r\n--".utf8) + Array(boundary.utf8)
        self.computesChecksums = computesChecksums
        let start: [UInt8] = [0x0D, 0x0A]
        start.withUnsafeBytes { self.consume($0) }
    }

    /// The parts, once the body ended; or why the body was not valid multipart.
    func finish() -> Result<[Part], MultipartError> {
        switch self.state {
        case .epilogue: return .success(self.parts)
        case .failed(let reason): return .failure(MultipartError(reason: reason))
        default: return .failure(MultipartError(reason: "the body ended before the closing boundary"))
        }
    }

    /// Feeds the next bytes of the body.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            switch self.state {
            case .preamble(let matched):
                index = self.scan(bytes, from: index, matched: matched, inContent: false)
            case .content(let matched):
                index = self.scan(bytes, from: index, matched: matched, inContent: true)
            case .afterDelimiter(var seen):
                seen.append(bytes[index])
                index += 1
                if seen.count < 2 {
                    self.state = .afterDelimiter(seen)
                } else if seen == [UInt8(ascii: "-"), UInt8(ascii: "-")] {
                    self.state = .epilogue
                } else if seen == [0x0D, 0x0A] {
                    self.state = .headers([])
                } else {
                    self.state = .failed("a boundary is followed by neither CRLF nor --")
                }
            case .headers(var block):
                block.append(bytes[index])
                index += 1
                if block.count > Self.maximumHeaderBytes {
                    self.state = .failed("a part's headers exceed \(Self.maximumHeaderBytes) bytes")
                } else if block.count >= 2 && block.suffix(2).elementsEqual([0x0D, 0x0A]) && (block.count == 2 || block.suffix(4).elementsEqual([0x0D, 0x0A, 0x0D, 0x0A])) {
                    self.current = Self.part(fromHeaders: block)
                    self.state = .content(matched: 0)
                } else {
                    self.state = .headers(block)
                }
            case .epilogue, .failed:
                return
            }
        }
    }

    /// Looks for the delimiter from `start`, with `matched` bytes of it already seen; content bytes
    /// go to the current part (or nowhere, in the preamble). Returns where it stopped.
    ///
    /// Bytes of a partial match are not reported until the match fails; they are then reported
    /// from the delimiter itself (they equal its first bytes), whichever chunk they came in.
    private mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, matched: Int, inContent: Bool) -> Int {
        var matched = matched
        var index = start
        var contentStart = start
        while index < bytes.count {
            if matched == 0 {
                // Jump to the next CR: everything before it is content.
                guard let base = bytes.baseAddress, let found = memchr(base + index, 0x0D, bytes.count - index) else {
                    self.emit(bytes, contentStart..<bytes.count, inContent: inContent)
                    index = bytes.count
                    break
                }
                index = base.distance(to: UnsafeRawPointer(found))
                self.emit(bytes, contentStart..<index, inContent: inContent)
                matched = 1
                index += 1
            } else if bytes[index] == self.delimiter[matched] {
                matched += 1
                index += 1
            } else {
                // What looked like a delimiter was content; this byte is examined again.
                self.delimiter.withUnsafeBytes { delimiter in
                    self.emit(delimiter, 0..<matched, inContent: inContent)
                }
                matched = 0
                contentStart = index
            }
            if matched == self.delimiter.count {
                self.endPart(inContent: inContent)
                self.state = .afterDelimiter([])
                return index
            }
        }
        self.state = inContent ? .content(matched: matched) : .preamble(matched: matched)
        return index
    }

    private mutating func emit(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, inContent: Bool) {
        guard inContent, !range.isEmpty, var part = self.current else { return }
        part.size += range.count
        if self.computesChecksums {
            part.checksum.update(UnsafeRawBufferPointer(rebasing: bytes[range]))
        }
        self.current = part
    }

    private mutating func endPart(inContent: Bool) {
        guard inContent, let part = self.current else { return }
        self.parts.append(part)
        self.current = nil
    }

    /// The names and type from a part's header block.
    private static func part(fromHeaders block: [UInt8]) -> Part {
        var part = Part()
        let text = String(decoding: block, as: UTF8.self)
        for line in text.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            switch name {
            case "content-disposition":
                let parameters = Self.parameters(of: value)
                part.name = parameters["name"]
                part.filename = parameters["filename"]
            case "content-type":
                part.contentType = String(value)
            default:
                break
            }
        }
        return part
    }

    /// `name="value"` parameters after the first `;`, quotes removed.
    private static func parameters(of value: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var pieces: [Substring] = []
        var inQuotes = false
        var start = value.startIndex
        for index in value.indices {
            if value[index] == "\"" { inQuotes.toggle() }
            if value[index] == ";" && !inQuotes {
                pieces.append(value[start..<index])
                start = value.index(after: index)
            }
        }
        pieces.append(value[start...])
        for piece in pieces.dropFirst() {
            let trimmed = piece.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            var parameter = trimmed[trimmed.index(after: equals)...]
            if parameter.hasPrefix("\""), parameter.hasSuffix("\""), parameter.count >= 2 {
                parameter = parameter.dropFirst().dropLast()
            }
            result[trimmed[..<equals].lowercased()] = String(parameter)
        }
        return result
    }
}

/// Why a body was not valid `multipart/form-data`.
struct MultipartError: Error, Hashable {
    var reason: String
}
