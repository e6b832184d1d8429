import Foundation

/// The demo's command line: `--requests N`, `--concurrency C`, `--url URL` (load another server),
/// `--backends a,b` (a subset), `--load-only` (no walkthrough).
struct DemoOptions {
    var requests = 1000
    var concurrency = 16
    /// Where the throughput loop sends its GETs; the embedded server's `/bytes/13` when `nil`.
    var url: URL?
    /// Which backends to run (`dispatch`, `dispatch-epoll`, `runloop-cfsocket`, `runloop-epoll`); all when empty.
    var backends: Set<String> = []
    /// Skip the walkthrough and run only the throughput loop.
    var loadOnly = false

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--requests": self.requests = iterator.next().flatMap { Int($0) }.map { max(1, $0) } ?? self.requests
            case "--concurrency": self.concurrency = iterator.next().flatMap { Int($0) }.map { max(1, $0) } ?? self.concurrency
            case "--url": self.url = iterator.next().flatMap { URL(string: $0) }
            case "--backends": self.backends = Set((iterator.next() ?? "").split(separator: ",").map(String.init))
            case "--load-only": self.loadOnly = true
            default: print("ignoring unknown argument \(argument)")
            }
        }
    }
}
