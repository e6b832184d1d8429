// The request serializers' form encoder (URLEncodedFormEncoder): a parameter tree made of the bytes,
// encoded with every option; the output must be pure form encoding (unreserved characters, %XX, `=`,
// `&`; brackets encoded), whatever the keys and values hold.
import CLibFuzzer
import CurlewSerialization

@_cdecl("fuzz_form_encoder_main")
public func fuzzFormEncoderMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzFormEncoder)
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormEncoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var reader = ByteReader(bytes: UnsafeRawBufferPointer(start: data, count: size))
    var parameters: Parameters = [:]
    while !reader.isAtEnd, parameters.count < 8 {
        parameters[reader.string()] = reader.value(depth: 0)
    }
    for arrays in [URLEncodedFormEncoder.ArrayEncoding.brackets, .noBrackets, .indexed] {
        for bools in [URLEncodedFormEncoder.BoolEncoding.numeric, .literal] {
            guard let encoded = try? URLEncodedFormEncoder(arrayEncoding: arrays, boolEncoding: bools).encode(parameters) else {
                continue
            }
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=&".utf8)
            precondition(encoded.utf8.allSatisfy { allowed.contains($0) }, "not form-encoded: \(encoded)")
        }
    }
    return 0
}

/// Reads a parameter tree out of fuzz bytes.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    var isAtEnd: Bool { self.index >= self.bytes.count }

    mutating func byte() -> UInt8 {
        guard !self.isAtEnd else { return 0 }
        defer { self.index += 1 }
        return self.bytes[self.index]
    }

    /// A length byte, then that many bytes as (possibly invalid) UTF-8.
    mutating func string() -> String {
        let length = Int(self.byte() % 16)
        let end = min(self.index + length, self.bytes.count)
        defer { self.index = end }
        return String(decoding: UnsafeRawBufferPointer(rebasing: self.bytes[self.index..<end]), as: UTF8.self)
    }

    mutating func value(depth: Int) -> ParameterValue {
        let kind = self.byte() % (depth < 4 ? 7 : 5)
        switch kind {
        case 0: return .string(self.string())
        case 1: return .integer(Int(Int8(bitPattern: self.byte())) * 1_000_003)
        case 2: return .double(Double(Int8(bitPattern: self.byte())) / 3)
        case 3: return .bool(self.byte() & 1 == 1)
        case 4: return .null
        case 5: return .array((0..<Int(self.byte() % 4)).map { _ in self.value(depth: depth + 1) })
        default:
            var dictionary: [String: ParameterValue] = [:]
            for _ in 0..<Int(self.byte() % 4) { dictionary[self.string()] = self.value(depth: depth + 1) }
            return .dictionary(dictionary)
        }
    }
}
