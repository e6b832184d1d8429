// swift-tools-version:6.0
// Curlew's runnable examples: one small program per group of the AFNetworking articles' claims, each
// starting the embedded test server (127.0.0.1 only) itself, so it runs offline. A package of its own,
// so that `swift test` on the library never builds them; `Scripts/examples.sh` builds and tests it.
import PackageDescription

/// One executable per lesson group; the name is the directory under `Sources/` and the command.
let examples = [
    "keep-alive", "sync-deadlock", "main-loop-lateness", "thread-per-operation", "trace-backends",
    "pause-resume", "batch-order",
]

let package = Package(
    name: "CurlewExamples",
    dependencies: [
        .package(name: "Curlew", path: ".."),
        // What the README's observability blocks import besides Curlew.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // What every example shares: the report it prints, thread names, the server, small waits.
        .target(
            name: "ExampleSupport",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"),
                .product(name: "CurlewTestServer", package: "Curlew"),
            ]
        ),
    ] + examples.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                "ExampleSupport",
                .product(name: "Curlew", package: "Curlew"),
                .product(name: "CurlewTestServer", package: "Curlew"),
            ]
        )
    } + [
        // Every Swift block of the README and the DocC articles, compiled (Scripts/snippets.py generates
        // them into Sources/snippets/Generated): documentation that drifts from the API fails the build.
        // Its warnings (values a fragment never uses) say nothing about the library and are not shown.
        .target(
            name: "snippets",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"), .product(name: "CurlewTesting", package: "Curlew"),
                .product(name: "CurlewOpenAPI", package: "Curlew"),
                .product(name: "CurlewServiceLifecycle", package: "Curlew"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        // Runs every example as a process of its own and checks what it printed.
        .testTarget(name: "ExampleTests", dependencies: examples.map { .target(name: $0) }),
    ]
)
