/// The programs `counts` runs clients under.
struct CountingTools: Sendable {
    var valgrind: String?
    var strace: String?
    var callgrindAnnotate: String?
    var strip: String?

    static func locate() -> CountingTools {
        CountingTools(
            valgrind: ExecutableLookup.tool("valgrind"), strace: ExecutableLookup.tool("strace"),
            callgrindAnnotate: ExecutableLookup.tool("callgrind_annotate"), strip: ExecutableLookup.tool("strip"))
    }
}
