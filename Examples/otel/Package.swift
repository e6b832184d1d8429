// swift-tools-version:6.2
// Curlew's requests traced to an OpenTelemetry collector with swift-otel: a package of its own, outside
// the library's dependencies and CI. See README.md.
import PackageDescription

let package = Package(
    name: "CurlewOTelExample",
    dependencies: [
        .package(name: "Curlew", path: "../.."),
        .package(url: "https://github.com/swift-otel/swift-otel", exact: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "curlew-otel",
            dependencies: [
                .product(name: "Curlew", package: "Curlew"),
                .product(name: "CurlewServiceLifecycle", package: "Curlew"),
                .product(name: "CurlewTestServer", package: "Curlew"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
