// The redirect planner: status and method from the first byte, the Location from the rest.
import CLibFuzzer
@_spi(Fuzzing) import CurlewTransport

@_cdecl("fuzz_redirect_planner_main")
public func fuzzRedirectPlannerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzRedirectPlanner)
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedirectPlanner(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzingEntryPoints.redirect(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
