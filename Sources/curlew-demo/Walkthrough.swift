import CurlewTestServer
import CurlewTransport
import Foundation

/// A few transfers that show what the engine does, printed one line each.
struct Walkthrough {
    let engine: TransferEngine
    let server: TestServer

    func run() async {
        await self.show("GET /json") {
            let response = try await self.engine.execute(TransferRequest(url: self.server.url(.json)))
            return "\(response.head.status) \(response.body?.count ?? 0) bytes, \(response.metrics.httpVersion.rawValue)"
        }
        await self.show("POST /echo, 1 MiB") {
            let body = Data(TestServer.expectedBody(count: 1 << 20))
            let response = try await self.engine.execute(TransferRequest(url: self.server.url(.echo), method: .post, body: .data(body)))
            let echo = try JSONDecoder().decode(EchoReply.self, from: response.body ?? Data())
            return "server received \(echo.bodyLength) bytes, checksum \(echo.bodyChecksum == FNV1a64.hex(TestServer.checksum(body)) ? "matches" : "DIFFERS")"
        }
        await self.show("GET /redirect/3") {
            let response = try await self.engine.execute(TransferRequest(url: self.server.url(.redirect(count: 3))))
            return "\(response.head.status) after \(response.metrics.redirectCount) redirects, at \(response.url.path)"
        }
        await self.show("GET redirect to file://") {
            _ = try await self.engine.execute(TransferRequest(url: self.server.url(.redirectTo(url: "file:///etc/passwd"))))
            return "followed (this must not happen)"
        }
        await self.show("GET 16 MiB") {
            let start = ContinuousClock.now
            let response = try await self.engine.execute(TransferRequest(url: self.server.url(.bytes(16 << 20))))
            let seconds = (ContinuousClock.now - start).seconds
            return "\(response.body?.count ?? 0) bytes in \(String(format: "%.3f", seconds)) s"
        }
        await self.show("GET refused port") {
            _ = try await self.engine.execute(TransferRequest(url: self.server.refusedURL))
            return "connected (this must not happen)"
        }
    }

    private func show(_ title: String, _ body: () async throws -> String) async {
        let padded = title.padding(toLength: 26, withPad: " ", startingAt: 0)
        do {
            print("  \(padded) \(try await body())")
        } catch let error as TransferError {
            print("  \(padded) error \(error.code.rawValue): \(error.message)")
        } catch {
            print("  \(padded) \(error)")
        }
    }
}

extension Duration {
    var seconds: Double {
        Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
    }
}
