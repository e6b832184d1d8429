import Foundation

/// Files in the temporary directory for tests that need a real file (a cookie jar, a file part, a
/// streamed body). Names are new each time; the test removes what it keeps.
public enum TemporaryFiles {
    /// A path for a cookie file, `curlew-cookies-<UUID>.txt`; nothing is created.
    public static func cookieFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("curlew-cookies-\(UUID().uuidString).txt")
    }

    /// A new directory `<prefix>-<UUID>` holding a file `name` with `contents`; returns the file.
    public static func write(_ contents: Data, name: String, prefix: String = "curlew") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }
}
