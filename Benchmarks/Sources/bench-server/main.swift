// bench-server: CurlewTestServer as a process, the benchmark runner's server when nginx is missing (and for
// the routes nginx cannot serve, such as /delay). The same program as the root package's curlew-test-server.
import CurlewTestServer

TestServer.runAsProcess(arguments: CommandLine.arguments)
