// curlew-test-server: the CurlewTestServer routes as a process of their own, for poking at the routes with
// curl (the benchmark runner's `bench-server` is the same program). `--help` lists the options.
import CurlewTestServer

TestServer.runAsProcess(arguments: CommandLine.arguments)
