import CurlewTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CurlewTransport

/// Cookie files in curl's Netscape format: loaded by curl's parser, saved atomically and privately,
/// bounded, with typed errors. Temporary files only; the interplay with the `curl` command is in
/// the conformance tests.
@Suite("Cookie files")
struct CookieFileTests {
    static let lines = """
        # Netscape HTTP Cookie File
        # a comment

        127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tabc
        #HttpOnly_.example.com\tTRUE\t/app\tTRUE\t4102444800\tid\t42
        example.org\tFALSE\t/\tFALSE\t1000\texpired\tlong-ago
        not a cookie line
        """

    @Test("a file's cookies are loaded: session, HttpOnly, domain and Secure ones; expired ones and junk are not")
    func loads() throws {
        let file = TemporaryFiles.cookieFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(Self.lines.utf8).write(to: file)
        let jar = try CookieJar(file: file)
        #expect(jar.file == file)
        let cookies = jar.cookies.sorted { $0.name < $1.name }
        #expect(cookies.map(\.name) == ["id", "session"])
        #expect(cookies.first?.domain == ".example.com" && cookies.first?.isHTTPOnly == true && cookies.first?.isSecure == true)
        #expect(cookies.last?.isSessionOnly == true && cookies.last?.value == "abc")
    }

    @Test("saved and loaded again, the same cookies; the file is private and replaced whole")
    func roundTrip() throws {
        let file = TemporaryFiles.cookieFile()
        let copy = TemporaryFiles.cookieFile()
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: copy)
        }
        try Data(Self.lines.utf8).write(to: file)
        let jar = try CookieJar(file: file)
        // An existing file readable by others is replaced by a private one.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        try jar.save()
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasPrefix("# Netscape HTTP Cookie File\n"))
        #expect(!text.contains("expired") && !text.contains("not a cookie"))
        try jar.save(to: copy)
        #expect((try FileManager.default.attributesOfItem(atPath: copy.path)[.posixPermissions] as? Int) == 0o600)
        let reloaded = try CookieJar(file: copy)
        #expect(Set(reloaded.cookies.map { "\($0.domain) \($0.path) \($0.name)=\($0.value) \($0.isSecure) \($0.isHTTPOnly)" })
                == Set(jar.cookies.map { "\($0.domain) \($0.path) \($0.name)=\($0.value) \($0.isSecure) \($0.isHTTPOnly)" }))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
            .filter { $0.hasPrefix(".\(file.lastPathComponent)") }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
    }

    @Test("a missing file makes an empty jar that save() creates")
    func missingFile() throws {
        let file = TemporaryFiles.cookieFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let jar = try CookieJar(file: file)
        #expect(jar.cookies.isEmpty)
        try jar.save()
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a file over the limit, a directory, or nowhere to write: typed errors")
    func errors() throws {
        let file = TemporaryFiles.cookieFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(Self.lines.utf8).write(to: file)
        #expect {
            _ = try CookieJar(file: file, maximumFileSize: 100)
        } throws: { error in
            (error as? TransferError)?.code == .cannotOpenFile && "\(error)".contains("maximumFileSize")
        }
        #expect(try CookieJar(file: file, maximumFileSize: Self.lines.utf8.count).cookies.count == 2)
        #expect { _ = try CookieJar(file: FileManager.default.temporaryDirectory) } throws: { error in
            (error as? TransferError)?.code == .cannotOpenFile
        }
        let nowhere = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString)/cookies.txt")
        #expect { try CookieJar().save(to: nowhere) } throws: { error in
            (error as? TransferError)?.code == .cannotWriteToFile
        }
        #expect { try CookieJar().save() } throws: { error in
            (error as? TransferError)?.code == .cannotWriteToFile
        }
    }
}
