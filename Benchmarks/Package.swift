// swift-tools-version:6.0
// The benchmark runner and the peers it compares Curlew with. A package of its own, so that
// `swift test` on the library never builds AsyncHTTPClient or the C client.
import PackageDescription

let package = Package(
    name: "CurlewBenchmarks",
    dependencies: [
        .package(name: "Curlew", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // What every Swift client shares: the load harness, process metrics, the result schema.
        .target(
            name: "BenchKit",
            dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")]
        ),
        // The runner: starts a server, runs every client in its own process, aggregates, reports.
        .executableTarget(
            name: "curlew-bench",
            dependencies: ["BenchKit", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // CurlewTestServer as a process, for machines without nginx.
        .executableTarget(name: "bench-server", dependencies: [.product(name: "CurlewTestServer", package: "Curlew")]),
        // The request every Curlew-based client sends (bench-curlew and bench-teaching).
        .target(
            name: "BenchCurlewRequest",
            dependencies: ["BenchKit", .product(name: "CurlewTransport", package: "Curlew")]
        ),
        // Clients, one executable per family so each process loads only what it measures.
        .executableTarget(
            name: "bench-curlew",
            dependencies: [
                "BenchKit", "BenchCurlewRequest", .product(name: "Curlew", package: "Curlew"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(name: "bench-urlsession", dependencies: ["BenchKit"]),
        .executableTarget(
            name: "bench-ahc",
            dependencies: ["BenchKit", .product(name: "AsyncHTTPClient", package: "async-http-client")]
        ),
        // The floor: a C curl-multi loop (epoll + curl_multi_socket_action), same reuse, no Swift.
        .executableTarget(name: "bench-curl-c", linkerSettings: [.linkedLibrary("curl")]),
        // The floor under the operation path: a dispatch hop, OperationQueue, NotificationCenter alone.
        .executableTarget(
            name: "bench-floor",
            dependencies: ["BenchKit", .product(name: "CurlewOperations", package: "Curlew")]
        ),
        // The two designs the articles reject: everything on the main run loop; a run-loop thread per operation.
        .executableTarget(
            name: "bench-teaching",
            dependencies: ["BenchKit", "BenchCurlewRequest", .product(name: "CurlewTransport", package: "Curlew"),
                           .product(name: "CurlewRunLoop", package: "Curlew")]
        ),
        // The runner's parsers and aggregation, without running anything.
        .testTarget(name: "CurlewBenchTests", dependencies: ["curlew-bench", "BenchKit"]),
    ]
)
