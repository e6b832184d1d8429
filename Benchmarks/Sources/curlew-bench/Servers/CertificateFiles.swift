import Foundation

/// The test TLS material of `CurlewTestServer` (a CA and a server certificate for 127.0.0.1): nginx's
/// TLS listener uses it too, so every client trusts one CA file whichever server answers.
struct CertificateFiles: Sendable, Hashable {
    /// The folder holding `ca.pem`, `server.pem` and `server.key`.
    var folder: String

    /// The test CA (clients trust it).
    var caFile: String { self.folder + "/ca.pem" }
    /// The server certificate (SAN 127.0.0.1 and localhost).
    var certificate: String { self.folder + "/server.pem" }
    /// The server certificate's private key.
    var privateKey: String { self.folder + "/server.key" }

    /// Finds the material: `CURLEW_TEST_SERVER_CERTIFICATES`, else the test server's resource bundle in
    /// the build folder, else `Sources/CurlewTestServer/Certificates` in a checkout above the build folder.
    static func locate() -> CertificateFiles? {
        let manager = FileManager.default
        func holdsMaterial(_ folder: String) -> Bool {
            ["ca.pem", "server.pem", "server.key"].allSatisfy { manager.isReadableFile(atPath: folder + "/" + $0) }
        }
        if let override = ProcessInfo.processInfo.environment["CURLEW_TEST_SERVER_CERTIFICATES"],
           !override.isEmpty, holdsMaterial(override) {
            return CertificateFiles(folder: override)
        }
        let build = ExecutableLookup.buildFolder
        let bundles = (try? manager.contentsOfDirectory(atPath: build.path)) ?? []
        for bundle in bundles.sorted() where bundle.hasSuffix("_CurlewTestServer.resources") {
            let folder = build.appendingPathComponent(bundle).appendingPathComponent("Certificates").path
            if holdsMaterial(folder) { return CertificateFiles(folder: folder) }
        }
        var directory = build
        for _ in 0..<8 {
            let folder = directory.appendingPathComponent("Sources/CurlewTestServer/Certificates").path
            if holdsMaterial(folder) { return CertificateFiles(folder: folder) }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}
