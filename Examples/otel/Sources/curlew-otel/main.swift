// Three requests to the embedded test server under one span, exported with swift-otel over OTLP/HTTP
// (localhost:4318 unless OTEL_EXPORTER_OTLP_ENDPOINT says otherwise), in one ServiceGroup with the
// exporter and the manager: the client's work ends, then the manager drains, then the exporter flushes.
import Curlew
import CurlewServiceLifecycle
import CurlewTestServer
import Logging
import OTel
import ServiceLifecycle
import Tracing

var configuration = OTel.Configuration.default
configuration.serviceName = "curlew-otel-example"
configuration.traces.otlpExporter.protocol = .httpProtobuf
configuration.metrics.otlpExporter.protocol = .httpProtobuf
configuration.logs.enabled = false
let observability = try OTel.bootstrap(configuration: configuration)

// Made after the bootstrap: a manager reads the tracer and the metrics factory when it is made.
let server = try TestServer.start()
let api = RequestOperationManager(baseURL: server.baseURL)

/// Sends the requests, prints the `traceparent` each one carried, and ends (which shuts the group down).
struct Client: Service {
    let api: RequestOperationManager

    func run() async throws {
        try await withSpan("curlew-otel-example") { _ in
            for index in 0..<3 {
                let reply = try await self.api.get("echo", parameters: ["n": "\(index)"], as: EchoReply.self)
                print("request \(index): traceparent \(reply.headerValues("traceparent").first ?? "none")")
            }
        }
    }
}

let group = ServiceGroup(configuration: ServiceGroupConfiguration(
    services: [
        .init(service: observability),
        .init(service: api),
        .init(service: Client(api: api), successTerminationBehavior: .gracefullyShutdownGroup),
    ],
    logger: Logger(label: "curlew-otel-example")
))
try await group.run()
server.shutdown()
