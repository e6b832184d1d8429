/// What a scenario asks the server for. nginx and the embedded server serve the same things at
/// different paths (nginx serves files; `CurlewTestServer` has routes).
enum Resource: String, Codable, Sendable, Hashable {
    /// A 13-byte body.
    case small
    /// A 64 KiB body.
    case medium
    /// A 16 MiB body.
    case large
    /// A 1 GiB body (the `stream` scenario's).
    case gibibyte
    /// A 64 MiB body (the `stream` scenario's with `--quick`).
    case mebibytes64
    /// A target that answers 200 to a POST (the body is read and dropped).
    case post
    /// A response that takes a long time (nginx cannot delay one: always the embedded server).
    case delayed

    /// Body size of the GET resources, bytes.
    var bodyBytes: Int? {
        switch self {
        case .small: return 13
        case .medium: return 65_536
        case .large: return 16_777_216
        case .gibibyte: return 1_073_741_824
        case .mebibytes64: return 67_108_864
        case .post, .delayed: return nil
        }
    }

    /// Whether nginx can serve it.
    var nginxCanServe: Bool { self != .delayed }

    /// Path on the nginx the runner configures.
    var nginxPath: String? {
        switch self {
        case .small: return "/small"
        case .medium: return "/64k"
        case .large: return "/16m"
        case .gibibyte: return "/1g"
        case .mebibytes64: return "/64m"
        case .post: return "/post"
        case .delayed: return nil
        }
    }

    /// Path on `CurlewTestServer`; `delayMilliseconds` is how long `.delayed` takes.
    func embeddedPath(delayMilliseconds: Int) -> String {
        switch self {
        case .small, .medium, .large, .gibibyte, .mebibytes64: return "/bytes/\(self.bodyBytes ?? 0)"
        case .post: return "/echo"
        case .delayed: return "/delay/\(delayMilliseconds)"
        }
    }
}
