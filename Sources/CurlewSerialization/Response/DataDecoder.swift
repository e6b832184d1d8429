import Foundation

/// Something that decodes a `Decodable` from bytes: `JSONDecoder`, `PropertyListDecoder`, or your
/// own (a CBOR or MessagePack decoder) for ``DecodableResponseSerializer``.
public protocol DataDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The bytes.
    /// - Returns: The value.
    /// - Throws: `DecodingError` (or the decoder's own error) when `data` does not hold a `type`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}
