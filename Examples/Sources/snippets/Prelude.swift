import Curlew
import Logging
import ServiceLifecycle
import Tracing

// What the documentation's code blocks use without declaring it: the names an application would
// already have. Scripts/snippets.py wraps each block in a function of this target (see its header).
// Nothing here runs: the target only has to compile.

let url = URL(fileURLWithPath: "/")
let fileURL = URL(fileURLWithPath: "/tmp/curlew-snippet.bin")
let logURL = URL(fileURLWithPath: "/tmp/curlew-snippet.log")
let photoURL = URL(fileURLWithPath: "/tmp/photo.jpg")
let userURL = URL(fileURLWithPath: "/")
let searchURL = URL(fileURLWithPath: "/")
let itemsURL = URL(fileURLWithPath: "/")
let uploadURL = URL(fileURLWithPath: "/")
let thumbnailURL = URL(fileURLWithPath: "/")
let urls: [URL] = []
let token = "token"

let api = RequestOperationManager(baseURL: url)
let engine = TransferEngine(scheduler: DispatchScheduler())
let runLoopEngine = TransferEngine(scheduler: RunLoopScheduler())
let queue = OperationQueue()
let handle = FileHandle.nullDevice
let request = TransferRequest(url: url)
let operation = RequestOperation(request: request)
let avatar = RequestOperation(request: request)
let profile = RequestOperation(request: request)
let feed = RequestOperation(request: request)
let form = MultipartFormData()
let serializer = JSONRequestSerializer()
let response = TransferResponse(head: HTTPResponse(status: .ok), body: nil, fileURL: nil, url: url, metrics: TransferMetrics())

struct User: Codable, Sendable { var id: Int; var name: String }
struct Item: Codable, Sendable { var id: Int }
struct NewItem: Codable, Sendable { var name: String }

final class SnippetDelegate: TransferDelegate {
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<TransferResponse, TransferError>) {}
}
let myDelegate = SnippetDelegate()

actor TokenStore {
    var token = "expired"
    func refresh() async { self.token = "fresh" }
}
let tokens = TokenStore()

struct BearerInterceptor: RequestInterceptor {
    let store: TokenStore
}

let tracer = NoOpTracer()
let logger = Logger(label: "app")
let chunks = AsyncStream<Data> { $0.finish() }

struct AppServer: Service {
    func run() async throws {}
}
let server = AppServer()
