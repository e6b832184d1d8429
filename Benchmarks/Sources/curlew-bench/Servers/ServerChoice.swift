import ArgumentParser

/// `--server`: which server the runner starts.
enum ServerChoice: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// nginx when it is installed and starts, else the embedded server.
    case auto
    /// nginx, or fail.
    case nginx
    /// The embedded server (`CurlewTestServer` in `bench-server`).
    case embedded
}
