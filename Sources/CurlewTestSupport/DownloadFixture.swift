import Foundation
import Testing

/// A download's destination for tests of the all-or-nothing rule: a directory of its own holding
/// `body.bin` with the user's old bytes (or nothing), and the check that a failure left it as it was.
public enum DownloadFixture {
    /// The bytes the user's file holds before the download. Computed: LeakSanitizer cannot follow a
    /// static `Data` (Scripts/leaks.sh says why).
    public static var oldBytes: Data { Data("the user's own file\n".utf8) }

    /// Runs `body` with a new directory and its `body.bin`, which holds ``oldBytes`` when `existing`
    /// (else it is absent); the directory is removed afterwards.
    public static func withDestination(existing: Bool = true, _ body: (URL, URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body.bin")
        if existing { try Self.oldBytes.write(to: destination) }
        try await body(directory, destination)
    }

    /// Expects the directory to hold the old destination alone: its bytes unchanged, no temporary file.
    public static func expectUntouched(_ directory: URL, _ destination: URL, existing: Bool = true,
                                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == (existing ? ["body.bin"] : []), "files left: \(names)", sourceLocation: sourceLocation)
        if existing {
            #expect(try Data(contentsOf: destination) == Self.oldBytes, "the destination changed", sourceLocation: sourceLocation)
        }
    }
}
