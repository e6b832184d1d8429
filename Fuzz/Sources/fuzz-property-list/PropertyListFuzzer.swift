// The property-list serializer: the binary scanner's expansion count and the text bound against what Foundation builds, with small limits.
import CLibFuzzer
import Glibc
@_spi(Fuzzing) import CurlewSerialization

@_cdecl("fuzz_property_list_main")
public func fuzzPropertyListMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    // No leak check after each input: Foundation's property-list parser drops a CFError for every
    // document it refuses, so nearly every input would pay for a scan of the heap (20 inputs a
    // second instead of hundreds). The check at exit still runs, with those leaks suppressed below.
    var arguments = (0..<Int(argc)).map { argv?[$0] }
    arguments.append(strdup("-detect_leaks=0"))
    arguments.append(nil)
    var count = argc + 1
    return arguments.withUnsafeMutableBufferPointer { buffer in
        var pointer = buffer.baseAddress
        return LLVMFuzzerRunDriver(&count, &pointer, fuzzPropertyList)
    }
}

/// One input (also exported under libFuzzer\'s own name, which its runtime references).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPropertyList(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    SerializationFuzzingEntryPoints.propertyList(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// LeakSanitizer's suppressions, which it asks this function for: what Foundation's property-list
/// parser makes and drops for a document it cannot parse, as Scripts/leaks.supp notes: the CFError
/// with its strings and user info (made by `__CFPropertyListCreateError`, or remade in
/// `_CFPropertyListCreateFromUTF8Data` when both text parsers failed), and the objects of a binary
/// property list it had read before an object it refuses (a well-formed table whose contents it
/// rejects).
@_cdecl("__lsan_default_suppressions")
public func leakSuppressions() -> UnsafePointer<CChar> {
    let suppressions: StaticString = "leak:__CFPropertyListCreateError\nleak:_CFPropertyListCreateFromUTF8Data\nleak:__CFBinaryPlistCreateObjectFiltered\n"
    return UnsafeRawPointer(suppressions.utf8Start).assumingMemoryBound(to: CChar.self)
}
