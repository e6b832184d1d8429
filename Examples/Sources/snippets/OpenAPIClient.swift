import Curlew
import CurlewOpenAPI

// What swift-openapi-generator makes of an application's openapi.yaml, for the documentation's OpenAPI
// examples: the same names and shapes (`Client`, `Servers`, `Operations.<Operation>.Output`), reduced to two
// operations written by hand over the transport. Nothing here runs: the target only has to compile.

struct Client: Sendable {
    let serverURL: URL
    let transport: any ClientTransport

    init(serverURL: URL, transport: any ClientTransport) {
        self.serverURL = serverURL
        self.transport = transport
    }

    /// `GET /users/{id}`, answered with a `User` as JSON.
    func getUser(path: Operations.GetUser.Input.Path) async throws -> Operations.GetUser.Output {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/users/\(path.id)")
        let (_, body) = try await self.transport.send(request, body: nil, baseURL: self.serverURL, operationID: "getUser")
        let data = try await Data(collecting: body ?? HTTPBody(), upTo: 1 << 20)
        return .ok(.init(body: .json(try JSONDecoder().decode(User.self, from: data))))
    }

    /// `GET /exports/{id}`, answered with `application/octet-stream`.
    func getExport(path: Operations.GetExport.Input.Path) async throws -> Operations.GetExport.Output {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/exports/\(path.id)")
        let (_, body) = try await self.transport.send(request, body: nil, baseURL: self.serverURL, operationID: "getExport")
        return .ok(.init(body: .binary(body ?? HTTPBody())))
    }
}

enum Servers {
    enum Server1 {
        static func url() throws -> URL { URL(fileURLWithPath: "/") }
    }
}

enum Operations {
    enum GetUser {
        enum Input { struct Path { var id: Int } }
        enum Output {
            struct Ok {
                enum Body {
                    case json(User)
                    var json: User { get throws { switch self { case .json(let user): return user } } }
                }
                var body: Body
            }
            case ok(Ok)
            var ok: Ok { get throws { switch self { case .ok(let ok): return ok } } }
        }
    }

    enum GetExport {
        enum Input { struct Path { var id: Int } }
        enum Output {
            struct Ok {
                enum Body {
                    case binary(HTTPBody)
                    var binary: HTTPBody { get throws { switch self { case .binary(let body): return body } } }
                }
                var body: Body
            }
            case ok(Ok)
            var ok: Ok { get throws { switch self { case .ok(let ok): return ok } } }
        }
    }
}
