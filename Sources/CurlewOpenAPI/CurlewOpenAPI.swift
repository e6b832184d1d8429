// One import for an application with a generated client: the transport, the manager it runs on, and the
// OpenAPI runtime's types it speaks (`ClientTransport`, `HTTPBody`).
@_exported import Curlew
@_exported import OpenAPIRuntime
