// bench-ahc: AsyncHTTPClient, the SwiftNIO-based peer.
import BenchKit

BenchClientMain.run(clients: [
    "async-http-client": { options throws(ClientSetupError) in try AsyncHTTPClientClient(options: options) },
])
