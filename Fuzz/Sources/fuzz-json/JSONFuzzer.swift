// JSONResponseSerializer's parser against JSONDecoder (the same documents accepted, the same values), and JSONValueCounter's count against the values built.
import CLibFuzzer
@_spi(Fuzzing) import CurlewSerialization

@_cdecl("fuzz_json_main")
public func fuzzJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzJSON)
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    SerializationFuzzingEntryPoints.json(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
