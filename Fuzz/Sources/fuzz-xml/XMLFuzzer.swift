// The XML serializer with small limits: depth, nodes and attributes per element (counted in the raw bytes before libxml2 recovers from errors) checked on the tree built.
import CLibFuzzer
import Glibc
@_spi(Fuzzing) import CurlewSerialization

@_cdecl("fuzz_xml_main")
public func fuzzXMLMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    // No leak check after each input: FoundationXML drops a CFError for every libxml2 error, so
    // nearly every input would pay for a scan of the heap (20 inputs a second instead of 450). The
    // check at exit still runs, with those leaks suppressed below.
    var arguments = (0..<Int(argc)).map { argv?[$0] }
    arguments.append(strdup("-detect_leaks=0"))
    arguments.append(nil)
    var count = argc + 1
    return arguments.withUnsafeMutableBufferPointer { buffer in
        var pointer = buffer.baseAddress
        return LLVMFuzzerRunDriver(&count, &pointer, fuzzXML)
    }
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXML(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    SerializationFuzzingEntryPoints.xml(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// LeakSanitizer's suppressions, which it asks this function for: the CFError FoundationXML makes
/// and drops for each libxml2 error, as Scripts/leaks.supp notes.
@_cdecl("__lsan_default_suppressions")
public func leakSuppressions() -> UnsafePointer<CChar> {
    let suppressions: StaticString = "leak:_CFErrorCreateFromXMLInterface\n"
    return UnsafeRawPointer(suppressions.utf8Start).assumingMemoryBound(to: CChar.self)
}
