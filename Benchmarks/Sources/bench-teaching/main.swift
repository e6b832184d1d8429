// bench-teaching: the two designs the AFNetworking articles reject, measured like the real clients.
// `main-runloop`: every transfer on the main thread's run loop. `thread-per-operation`: a new thread,
// run loop and engine per request.
import BenchKit

BenchClientMain.run(clients: [
    "main-runloop": { options throws(ClientSetupError) in try MainRunLoopClient(options: options) },
    "thread-per-operation": { options throws(ClientSetupError) in try ThreadPerOperationClient(options: options) },
])
