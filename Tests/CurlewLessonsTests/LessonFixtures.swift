import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The lessons' server: the test process's shared one (127.0.0.1 only).
func server() throws -> TestServer { try testServer() }

/// Runs `action` on a thread of its own as soon as `condition` holds (polled there, blocking that
/// thread only), or gives up after `timeout`. For the steps of a lesson that must follow each other
/// closely: a test task's polls are wake-ups on the cooperative pool, which a loaded machine (other
/// tests' child processes under ThreadSanitizer) delays by seconds.
func onOwnThread(when condition: @escaping @Sendable () -> Bool, timeout: Duration = defaultTestTimeout,
                 _ action: @escaping @Sendable () -> Void) {
    let thread = Thread {
        if blockingWaitUntil(timeout: timeout, condition) { action() }
    }
    thread.name = "lesson-step"
    thread.start()
}

/// A delegate that notes which thread each call ran on and waits for the end.
final class ThreadNotingDelegate: TransferDelegate, Sendable {
    let threads = Locked<[Int32]>([])
    let result = Locked<Result<TransferResponse, TransferError>?>(nil)

    private func note() {
        if let id = ProcessInspector.currentThreadID() {
            self.threads.withLock { $0.append(id) }
        }
    }

    func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) { self.note() }
    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) { self.note() }
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.note()
        self.result.set(result)
    }

    var isDone: Bool { self.result.value != nil }
}

/// The facts an exit test's child process reports, as one `key=value` line on standard output that
/// the parent parses.
///
/// ```swift
/// let child = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
///     var facts = ChildFacts()
///     facts["threads"] = "1"
///     print(facts.line())
/// }
/// #expect(ChildFacts.parse(child?.standardOutputContent ?? [])["threads"] == "1")
/// ```
struct ChildFacts {
    /// Marks the line among whatever else the child prints.
    static let marker = "CURLEW-LESSON-FACTS"
    private var pairs: [(String, String)] = []

    /// The value of `key` (values contain no spaces).
    subscript(key: String) -> String? {
        get { self.pairs.last { $0.0 == key }?.1 }
        set { self.pairs.append((key, (newValue ?? "").replacingOccurrences(of: " ", with: "_"))) }
    }

    /// The line to print.
    func line() -> String {
        Self.marker + " " + self.pairs.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    /// The line to print when the child could not even run its checks.
    func line(failing reason: String) -> String {
        var facts = self
        facts["failure"] = reason
        return facts.line()
    }

    /// The facts in a child's standard output.
    static func parse(_ output: [UInt8]) -> [String: String] {
        let text = String(decoding: output, as: UTF8.self)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix(Self.marker) }) else { return [:] }
        var facts: [String: String] = [:]
        for item in line.split(separator: " ").dropFirst() {
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { facts[String(parts[0])] = String(parts[1]) }
        }
        return facts
    }
}
