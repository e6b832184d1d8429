import Testing
@testable import curlew_bench

@Suite("Parsing what valgrind and strace print")
struct CountsParserTests {
    @Test("strace -c: calls per system call, the total row and the header skipped")
    func straceSummary() throws {
        let text = """
            % time     seconds  usecs/call     calls    errors syscall
            ------ ----------- ----------- --------- --------- ----------------
             31.98    0.000189           5        34        13 openat
             17.60    0.000104           3        30           mmap
              0.00    0.000000           0         1           rseq
            ------ ----------- ----------- --------- --------- ----------------
            100.00    0.000591           4        65        13 total
            """
        let summary = try #require(StraceSummary(text))
        #expect(summary.calls == ["openat": 34, "mmap": 30, "rseq": 1])
        #expect(summary.total == 65)
        #expect(StraceSummary("no table here") == nil)
    }

    @Test("callgrind: the totals line, or the summary line of older versions")
    func callgrindTotals() {
        #expect(CallgrindOutput.totalInstructions(in: "events: Ir\nfn=main\n0 5\ntotals: 123456789\n") == 123_456_789)
        #expect(CallgrindOutput.totalInstructions(in: "summary: 42\n") == 42)
        #expect(CallgrindOutput.totalInstructions(in: "events: Ir\n") == nil)
    }

    @Test("callgrind_annotate: functions by self cost, the program total left out")
    func annotation() {
        let text = """
            --------------------------------------------------------------------------------
            Ir
            --------------------------------------------------------------------------------
            1,000,000 (100.0%)  PROGRAM TOTALS

            --------------------------------------------------------------------------------
            Ir                 file:function
            --------------------------------------------------------------------------------
            250,000 (25.00%)  ???:curl_multi_socket_action [/usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0]
            400,000 (40.00%)  ???:malloc [/usr/lib/x86_64-linux-gnu/libc.so.6]
            """
        let functions = CallgrindOutput.functions(inAnnotation: text)
        #expect(functions.map(\.instructions) == [400_000, 250_000])
        #expect(functions.first?.name == "???:malloc [/usr/lib/x86_64-linux-gnu/libc.so.6]")
    }
}
