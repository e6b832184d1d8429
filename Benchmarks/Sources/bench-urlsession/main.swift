// bench-urlsession: FoundationNetworking's URLSession, the client a Linux Swift user gets by default.
import BenchKit

BenchClientMain.run(clients: [
    "urlsession": { options throws(ClientSetupError) in try URLSessionClient(options: options) },
])
