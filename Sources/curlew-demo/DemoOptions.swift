/// The demo's command line: `--requests N`, `--concurrency C`.
struct DemoOptions {
    var requests = 1000
    var concurrency = 16

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--requests": self.requests = iterator.next().flatMap { Int($0) }.map { max(1, $0) } ?? self.requests
            case "--concurrency": self.concurrency = iterator.next().flatMap { Int($0) }.map { max(1, $0) } ?? self.concurrency
            default: print("ignoring unknown argument \(argument)")
            }
        }
    }
}
