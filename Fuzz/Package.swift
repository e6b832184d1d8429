// swift-tools-version:6.0
// libFuzzer targets for Curlew's parsers and planners. A package of its own (depending on the library
// by path) so that `swift test` never builds them; Scripts/fuzz.sh builds them with
// `-sanitize=fuzzer` (and AddressSanitizer) and runs each for a bounded time.
import PackageDescription

let fuzzerFlags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "CurlewFuzz",
    dependencies: [
        .package(name: "Curlew", path: ".."),
    ],
    targets: [
        // libFuzzer's driver, declared (the fuzzer runtime provides it).
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(
            name: "fuzz-response-head",
            dependencies: ["CLibFuzzer", .product(name: "CurlewTransport", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
        .executableTarget(
            name: "fuzz-redirect-planner",
            dependencies: ["CLibFuzzer", .product(name: "CurlewTransport", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
        .executableTarget(
            name: "fuzz-resume-planner",
            dependencies: ["CLibFuzzer", .product(name: "CurlewTransport", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
        .executableTarget(
            name: "fuzz-form-encoder",
            dependencies: ["CLibFuzzer", .product(name: "CurlewSerialization", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
        .executableTarget(
            name: "fuzz-property-list",
            dependencies: ["CLibFuzzer", .product(name: "CurlewSerialization", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
        .executableTarget(
            name: "fuzz-xml",
            dependencies: ["CLibFuzzer", .product(name: "CurlewSerialization", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
        .executableTarget(
            name: "fuzz-json",
            dependencies: ["CLibFuzzer", .product(name: "CurlewSerialization", package: "Curlew")],
            swiftSettings: fuzzerFlags
        ),
    ]
)
