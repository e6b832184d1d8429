import Foundation
import HTTPTypes
import Testing
@testable import CurlewTransport

/// `HandleSetup` decides whether a pooled handle keeps its options: equal setups share a handle
/// without a reset, so everything that changes an option must change the setup.
@Suite("Handle setup")
struct HandleSetupTests {
    private func setup(_ url: String = "http://a.test/x", method: HTTPRequest.Method = .get, sendsBody: Bool = false,
                       fields: HTTPFields = [:], _ change: (inout TransferOptions) -> Void = { _ in }) throws -> HandleSetup {
        var options = TransferOptions()
        change(&options)
        let attempt = Attempt(target: try RequestTarget(validating: url), method: method, headerFields: fields,
                              sendsBody: sendsBody, redirectCount: 0, resume: nil)
        return HandleSetup(options: options, attempt: attempt, sendsBody: sendsBody)
    }

    @Test("what names the transfer (URL on one scheme, header values) leaves the setup alike")
    func perTransferDetailsDoNotMatter() throws {
        let base = try self.setup()
        #expect(try self.setup("http://b.test:8080/other?q=1") == base)
        #expect(try self.setup(fields: [.accept: "text/plain", .authorization: "Bearer x"]) == base)
        #expect(try self.setup { $0.timeout = .seconds(3) } == base, "the total timeout is set per transfer")
        #expect(try self.setup { $0.maximumResponseBodySize = 10 } == base, "checked by the engine, not curl")
        #expect(base.isReusable)
    }

    @Test("every option curl is given changes the setup")
    func optionsMatter() throws {
        let base = try self.setup()
        let changed: [HandleSetup] = [
            try self.setup(method: .head),
            try self.setup(method: .delete),
            try self.setup(method: .post, sendsBody: true),
            try self.setup(method: .put, sendsBody: true),
            try self.setup("https://a.test/x"),  // waits for a multiplexed connection
            try self.setup(fields: [.acceptEncoding: "identity"]),
            try self.setup { $0.automaticDecompression = false },
            try self.setup { $0.connectTimeout = .seconds(5) },
            try self.setup { $0.connectTimeout = nil },
            try self.setup { $0.idleTimeout = .seconds(5) },
            try self.setup { $0.httpVersion = .http1_1 },
            try self.setup { $0.httpVersion = .http2PriorKnowledge },
            try self.setup { $0.tls.verification = .none },
            try self.setup { $0.tls.trustedRootsFile = "/tmp/roots.pem" },
            try self.setup { $0.proxy = .none },
            try self.setup { $0.maximumUploadBytesPerSecond = 1000 },
            try self.setup { $0.maximumDownloadBytesPerSecond = 1000 },
        ]
        for (index, setup) in changed.enumerated() {
            #expect(setup != base, "change \(index) left the setup equal")
        }
        #expect(try self.setup(method: .post, sendsBody: true) != self.setup(method: .put, sendsBody: true))
        #expect(try self.setup { $0.maximumUploadBytesPerSecond = 0 } == base, "a rate of 0 is no limit")
    }

    @Test("a streamed body reads as much at once as its buffer allows, between 16 and 256 KiB")
    func streamedBodyReceiveBuffer() throws {
        let attempt = Attempt(target: try RequestTarget(validating: "http://a.test/x"), method: .get, headerFields: [:],
                              sendsBody: false, redirectCount: 0, resume: nil)
        func setup(streaming bufferSize: Int?) -> HandleSetup {
            HandleSetup(options: TransferOptions(), attempt: attempt, sendsBody: false, streamBufferSize: bufferSize)
        }
        #expect(setup(streaming: nil).receiveBufferSize == nil, "other bodies keep curl's default")
        #expect(setup(streaming: ResponseBodyStream.defaultBufferSize).receiveBufferSize == 256 << 10)
        #expect(setup(streaming: 64 << 10).receiveBufferSize == 64 << 10)
        #expect(setup(streaming: 1).receiveBufferSize == 16 << 10)
        #expect(setup(streaming: 64 << 10) != setup(streaming: nil), "a pooled handle is reset between the two")
    }

    @Test("setups with secrets are never kept")
    func secretsAreNotKept() throws {
        #expect(try !self.setup { $0.credentials = TransferCredentials(user: "u", password: "p") }.isReusable)
        #expect(try !self.setup { $0.wireTracer = WireTracer { _, _ in } }.isReusable)
        #expect(try !self.setup { $0.tls.clientCertificate = ClientCertificate(certificateFile: "/tmp/c.pem") }.isReusable)
    }

    @Test("a cookie jar is kept, for the next transfer with the same jar only")
    func cookieJarIsKeptForItsJar() throws {
        let jar = CookieJar()
        let withJar = try self.setup { $0.cookieJar = jar }
        #expect(withJar.isReusable)
        #expect(try self.setup { $0.cookieJar = jar } == withJar)
        #expect(try self.setup { $0.cookieJar = CookieJar() } != withJar, "another jar must reset the handle")
        #expect(try self.setup() != withJar, "no jar must reset the handle")
    }
}
