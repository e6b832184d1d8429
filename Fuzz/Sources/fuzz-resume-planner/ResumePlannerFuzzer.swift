// The resume planner: a range reply made of the bytes, against a resume from a known offset.
import CLibFuzzer
@_spi(Fuzzing) import CurlewTransport

@_cdecl("fuzz_resume_planner_main")
public func fuzzResumePlannerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzResumePlanner)
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResumePlanner(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzingEntryPoints.resume(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
