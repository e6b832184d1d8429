// bench-curlew: Curlew's clients. The engine directly, through a delegate (`curlew-*-engine`; `engine.stream` in the
// stream scenario) or its async API (`curlew-dispatch-epoll-engine-async`, `curlew-runloop-epoll-engine-async`), through
// RequestOperation on an OperationQueue (`curlew-dispatch`, `curlew-dispatch-epoll`, `curlew-runloop`, `curlew-runloop-epoll`),
// through the manager's async path over the engine (`curlew-dispatch-manager`, `curlew-dispatch-epoll-manager`,
// `curlew-runloop-epoll-manager`), and, for the batch scenario only, through OperationBatch (`curlew-*-batch`), on each backend.
import BenchKit
import Foundation
import InMemoryTracing
import Tracing

// `CURLEW_BENCH_TRACER=in-memory`: a tracer bootstrapped, so that the manager clients trace every request
// (the cost of tracing; InMemoryTracer's own work included).
if ProcessInfo.processInfo.environment["CURLEW_BENCH_TRACER"] == "in-memory" {
    InstrumentationSystem.bootstrap(InMemoryTracer(recordInjections: false, recordExtractions: false))
}

BenchClientMain.run(clients: [
    "curlew-dispatch-engine": { options throws(ClientSetupError) in try EngineClient(options: options, backend: .dispatch) },
    "curlew-dispatch-epoll-engine": { options throws(ClientSetupError) in try EngineClient(options: options, backend: .dispatchEpoll) },
    "curlew-runloop-engine": { options throws(ClientSetupError) in try EngineClient(options: options, backend: .runLoopCFSocket) },
    "curlew-runloop-epoll-engine": { options throws(ClientSetupError) in try EngineClient(options: options, backend: .runLoopEpoll) },
    "curlew-dispatch-epoll-engine-async": { options throws(ClientSetupError) in try EngineAsyncClient(options: options, backend: .dispatchEpoll) },
    "curlew-runloop-epoll-engine-async": { options throws(ClientSetupError) in try EngineAsyncClient(options: options, backend: .runLoopEpoll) },
    "curlew-dispatch": { options throws(ClientSetupError) in try OperationClient(options: options, backend: .dispatch) },
    "curlew-dispatch-epoll": { options throws(ClientSetupError) in try OperationClient(options: options, backend: .dispatchEpoll) },
    "curlew-runloop": { options throws(ClientSetupError) in try OperationClient(options: options, backend: .runLoopCFSocket) },
    "curlew-runloop-epoll": { options throws(ClientSetupError) in try OperationClient(options: options, backend: .runLoopEpoll) },
    "curlew-dispatch-manager": { options throws(ClientSetupError) in try ManagerClient(options: options, backend: .dispatch) },
    "curlew-dispatch-epoll-manager": { options throws(ClientSetupError) in try ManagerClient(options: options, backend: .dispatchEpoll) },
    "curlew-runloop-epoll-manager": { options throws(ClientSetupError) in try ManagerClient(options: options, backend: .runLoopEpoll) },
    "curlew-dispatch-batch": { options throws(ClientSetupError) in try BatchClient(options: options, backend: .dispatch) },
    "curlew-runloop-batch": { options throws(ClientSetupError) in try BatchClient(options: options, backend: .runLoopCFSocket) },
    "curlew-runloop-epoll-batch": { options throws(ClientSetupError) in try BatchClient(options: options, backend: .runLoopEpoll) },
])
