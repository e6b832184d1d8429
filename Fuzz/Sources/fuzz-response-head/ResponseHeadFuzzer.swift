// The response-head parser (with the resume planner and Retry-After on the heads it makes).
import CLibFuzzer
@_spi(Fuzzing) import CurlewTransport

@_cdecl("fuzz_response_head_main")
public func fuzzResponseHeadMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzResponseHead)
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzingEntryPoints.responseHead(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
