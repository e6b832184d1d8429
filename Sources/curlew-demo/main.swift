// curlew-demo: the quick start's main job until the benchmark runner exists.
//
// Starts the embedded test server on 127.0.0.1, then on each scheduler backend runs a few transfers
// (a GET, a POST, a redirect chain, a refused redirect to file://, a 16 MiB download, a refused
// connection) and 1,000 small GETs at concurrency 16, and prints what happened.
//
//     swift run -c release curlew-demo [--requests N] [--concurrency C] [--url URL] [--backends a,b] [--load-only]

import CurlewDispatch
import CurlewRunLoop
import CurlewTestServer
import CurlewTransport
import Foundation

let options = DemoOptions(CommandLine.arguments.dropFirst())
let server = try TestServer.start(TestServer.Configuration(eventLoopThreads: 1))
defer { server.shutdown() }

print("Curlew demo: libcurl \(LibCurl.version), embedded server on \(server.baseURL.absoluteString)")
print("")

let backends: [(String, @Sendable () -> any TransferScheduler)] = [
    ("dispatch", { DispatchScheduler(sockets: .sourcePerSocket) }),
    ("dispatch-epoll", { DispatchScheduler() }),
    ("runloop-cfsocket", { RunLoopScheduler(sockets: .cfSocket) }),
    ("runloop-epoll", { RunLoopScheduler(sockets: .epollSource) }),
]

var rows: [ThroughputResult] = []
for (name, makeScheduler) in backends where options.backends.isEmpty || options.backends.contains(name) {
    print("== \(name)")
    if !options.loadOnly {
        let engine = TransferEngine(scheduler: makeScheduler())
        await Walkthrough(engine: engine, server: server).run()
        await engine.shutdown()
    }

    var configuration = TransferEngine.Configuration()
    configuration.maximumConnectionsPerHost = options.concurrency
    let loadEngine = TransferEngine(scheduler: makeScheduler(), configuration: configuration)
    rows.append(await Throughput.measure(backend: name, engine: loadEngine, url: options.url ?? server.url(.bytes(13)),
                                         requests: options.requests, concurrency: options.concurrency))
    if ProcessInfo.processInfo.environment["CURLEW_DEMO_DIAGNOSTICS"] != nil {
        print("  load engine: \(await loadEngine.diagnostics())")
    }
    await loadEngine.shutdown()
    print("")
}

if let url = options.url {
    print("GET \(url.absoluteString): \(options.requests) requests at concurrency \(options.concurrency), one run each")
    print("(CPU is this process's: the embedded server idles):")
} else {
    print("Small GETs (13 bytes): \(options.requests) requests at concurrency \(options.concurrency), one run each,")
    print("client and embedded server in one process (CPU includes the server's):")
}
print(ThroughputResult.table(rows))
