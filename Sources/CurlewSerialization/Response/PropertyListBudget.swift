import Foundation

/// The limits on a property list checked before Foundation parses it, shared by
/// ``PropertyListResponseSerializer`` and ``DecodableResponseSerializer`` (with a
/// `PropertyListDecoder`): a binary property list is measured as it will expand
/// (``BinaryPropertyListScanner``), a text one bounded from its bytes (``TextPropertyListScanner``).
struct PropertyListBudget {
    /// The most values, counted once per reference.
    let maximumNodeCount: Int
    /// The most bytes of strings and data, counted once per reference.
    let maximumExpandedByteCount: Int

    private static let binaryPrefix = Array("bplist".utf8)

    /// Why `body` must not reach Foundation, or `nil`.
    func refusal(of body: Data) -> ResponseSerializationError.Reason? {
        body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> ResponseSerializationError.Reason? in
            if bytes.hasBytes(Self.binaryPrefix, at: 0) {
                let scanner = BinaryPropertyListScanner(maximumNodeCount: self.maximumNodeCount,
                                                        maximumByteCount: self.maximumExpandedByteCount)
                do throws(BinaryPropertyListScanner.Failure) {
                    _ = try scanner.expansion(of: bytes)
                    return nil
                } catch {
                    switch error {
                    case .tooManyNodes: return .tooManyNodes(limit: self.maximumNodeCount)
                    case .tooLarge: return .tooLarge(limit: self.maximumExpandedByteCount)
                    case .malformed(let description): return Self.corrupt(description)
                    }
                }
            }
            do throws(TextPropertyListScanner.Failure) {
                return try TextPropertyListScanner.nodeBound(of: bytes) > self.maximumNodeCount
                    ? .tooManyNodes(limit: self.maximumNodeCount) : nil
            } catch {
                switch error {
                case .unsupportedEncoding(let name):
                    return Self.corrupt("Property lists in the encoding \(name) are refused: only UTF-8, UTF-16, UTF-32, ASCII and the ISO 8859 and Windows code pages are read.")
                }
            }
        }
    }

    private static func corrupt(_ description: String) -> ResponseSerializationError.Reason {
        .decodingFailed(underlying: CocoaError(.propertyListReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: description]),
                        codingPath: [])
    }
}
