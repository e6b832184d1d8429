import CurlewTestServer
import CurlewTestSupport
import CurlewTransport
import Foundation
import HTTPTypes
import Testing

/// The lessons' server (127.0.0.1 only).
let lessonServer: Result<TestServer, any Error> = Result { try TestServer.start() }

func server() throws -> TestServer { try lessonServer.get() }

/// A delegate that notes which thread each call ran on and waits for the end.
final class ThreadNotingDelegate: TransferDelegate, Sendable {
    let threads = Locked<[Int32]>([])
    let result = Locked<Result<TransferResponse, TransferError>?>(nil)

    private func note() {
        if let id = ProcessInspector.currentThreadID() {
            self.threads.withLock { $0.append(id) }
        }
    }

    func transfer(_ transfer: Transfer, didReceive response: HTTPResponse) { self.note() }
    func transfer(_ transfer: Transfer, didUpdate progress: TransferProgress) { self.note() }
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {
        self.note()
        self.result.set(result)
    }

    var isDone: Bool { self.result.value != nil }
}
