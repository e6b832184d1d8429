// swift-tools-version:6.0
// Curlew: AFNetworking's operation-based networking, rebuilt GCD-first in Swift 6 for Linux on libcurl.
import PackageDescription

let package = Package(
    name: "Curlew",
    products: [
        .library(name: "CurlewTransport", targets: ["CurlewTransport"]),
        .library(name: "CurlewDispatch", targets: ["CurlewDispatch"]),
        .library(name: "CurlewRunLoop", targets: ["CurlewRunLoop"]),
        .library(name: "CurlewSerialization", targets: ["CurlewSerialization"]),
        .library(name: "CurlewOperations", targets: ["CurlewOperations"]),
        .library(name: "CurlewBatching", targets: ["CurlewBatching"]),
        .library(name: "Curlew", targets: ["Curlew"]),
        .library(name: "CurlewTesting", targets: ["CurlewTesting"]),
        .library(name: "CurlewOpenAPI", targets: ["CurlewOpenAPI"]),
        .library(name: "CurlewServiceLifecycle", targets: ["CurlewServiceLifecycle"]),
        .library(name: "CurlewTestServer", targets: ["CurlewTestServer"]),
        .executable(name: "curlew-demo", targets: ["curlew-demo"]),
        .executable(name: "curlew-test-server", targets: ["curlew-test-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // `swift package generate-documentation` (Scripts/docs.sh); a plugin, so nothing of it is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", exact: "1.5.0"),
    ],
    targets: [
        // C interop: libcurl with typed shims for its variadic calls, and the Linux calls Glibc hides.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(name: "CCurlewLinux"),

        // The shared engine: the scheduler seam, curl's multi-socket API, transfers, errors.
        .target(
            name: "CurlewTransport",
            dependencies: [
                "CCurl",
                "CCurlewLinux",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        // Backend 2 (the default): one serial queue, DispatchSources for sockets and the timer.
        .target(name: "CurlewDispatch", dependencies: ["CurlewTransport"]),
        // Backend 1 (classic): a dedicated Thread running a RunLoop kept alive by a port.
        .target(name: "CurlewRunLoop", dependencies: ["CurlewTransport", "CCurlewLinux"]),

        // Request and response serializers, multipart forms: builds TransferRequests, calls no curl API.
        .target(
            name: "CurlewSerialization",
            dependencies: ["CurlewTransport", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        // RequestOperation: AFURLConnectionOperation's asynchronous Operation, on any backend.
        .target(name: "CurlewOperations", dependencies: ["CurlewTransport", "CurlewSerialization"]),
        // Batches of operations: progress, and one completion after every member's own completion.
        .target(name: "CurlewBatching", dependencies: ["CurlewOperations", "CurlewTransport"]),
        // The umbrella: backend choice, the default engine, RequestOperationManager and the async/await API,
        // and everything re-exported.
        .target(
            name: "Curlew",
            dependencies: [
                "CurlewTransport", "CurlewDispatch", "CurlewRunLoop", "CurlewSerialization", "CurlewOperations",
                "CurlewBatching",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Testing code built on Curlew without sockets: StubTransport and its fixtures. No SwiftNIO, no
        // test server: an app's test target adds it beside Curlew.
        .target(
            name: "CurlewTesting",
            dependencies: ["Curlew", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),

        // A ClientTransport for OpenAPI-generated clients over the manager, streaming both ways; a product of its
        // own so that users who don't use OpenAPI don't build its runtime.
        .target(
            name: "CurlewOpenAPI",
            dependencies: [
                "Curlew",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ]
        ),

        // The manager as a swift-service-lifecycle Service: shut down in order with the rest of a server.
        .target(
            name: "CurlewServiceLifecycle",
            dependencies: ["Curlew", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),

        // An in-process HTTP server (SwiftNIO) bound to 127.0.0.1, shared by tests, examples and benchmarks.
        .target(
            name: "CurlewTestServer",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            resources: [.copy("Certificates")]
        ),
        // The test server as a process of its own (the benchmark runner starts it when nginx is missing).
        .executableTarget(name: "curlew-test-server", dependencies: ["CurlewTestServer"]),
        // What every test target shares: the backend configurations, waiting and process-inspection helpers,
        // the shared test server, the engine harness and the transfer recorder.
        .target(
            name: "CurlewTestSupport",
            dependencies: [
                "CurlewTransport", "CurlewDispatch", "CurlewRunLoop", "CurlewOperations", "CCurlewLinux", "CurlewTestServer",
            ]
        ),

        // The quick start's main job until the benchmark runner exists.
        .executableTarget(
            name: "curlew-demo",
            dependencies: ["CurlewTransport", "CurlewDispatch", "CurlewRunLoop", "CurlewTestServer"]
        ),

        .testTarget(name: "CurlewTransportTests", dependencies: ["CurlewTransport", "CurlewTestSupport"]),
        .testTarget(
            name: "CurlewSerializationTests",
            dependencies: [
                "CurlewSerialization", "CurlewTestSupport", "CurlewTestServer",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "CurlewSchedulerTests", dependencies: ["CurlewTestSupport"]),
        .testTarget(name: "CurlewTestServerTests", dependencies: ["CurlewTestSupport", "CurlewTestServer"]),
        .testTarget(name: "CurlewConformanceTests", dependencies: ["CurlewTestSupport", "CurlewTestServer"]),
        .testTarget(name: "CurlewOperationsTests", dependencies: ["Curlew", "CurlewTestSupport", "CurlewTestServer"]),
        .testTarget(name: "CurlewBatchingTests", dependencies: ["Curlew", "CurlewTestSupport", "CurlewTestServer"]),
        .testTarget(name: "CurlewLessonsTests", dependencies: ["Curlew", "CurlewTestSupport", "CurlewTestServer"]),
        .testTarget(
            name: "CurlewTests",
            dependencies: [
                "Curlew", "CurlewTesting", "CurlewTestSupport", "CurlewTestServer",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "CurlewServiceLifecycleTests",
            dependencies: [
                "CurlewServiceLifecycle", "Curlew", "CurlewTestSupport", "CurlewTestServer",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Generated/ holds a client generated once from openapi.yaml (see openapi-generator-config.yaml): CI
        // builds the client, never the generator.
        .testTarget(
            name: "CurlewOpenAPITests",
            dependencies: [
                "CurlewOpenAPI", "Curlew", "CurlewTesting", "CurlewTestSupport", "CurlewTestServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"]
        ),
    ]
)
