import CurlewTransport
import Foundation

/// The external servers the tests use, each started with a generated configuration (see
/// ``ExternalServer``).
extension ExternalServer {
    /// nginx, listening on one Unix socket per name in `sockets` (`$DIR/<name>.sock`, see
    /// ``socketPath(_:)``) and on ``port`` of 127.0.0.1. Every request is answered 200 with one
    /// line: `<listener> connection=<n> requests=<m> host=<Host>`, where `<listener>` is the
    /// socket's name or `tcp`, `n` is nginx's number for the connection and `m` how many requests
    /// it has carried — which tells a test where its request went and whether its connection was
    /// reused.
    public static func nginx(sockets: [String]) throws -> ExternalServer {
        func server(_ listen: String, _ name: String) -> String {
            """
                server {
                    listen \(listen);
                    location / { return 200 "\(name) connection=$connection requests=$connection_requests host=$http_host\\n"; }
                }

            """
        }
        let servers = sockets.map { server("unix:$DIR/\($0).sock", $0) }.joined() + server("127.0.0.1:$PORT", "tcp")
        let configuration = """
            daemon off;
            master_process off;
            pid $DIR/nginx.pid;
            error_log $DIR/error.log info;
            events { worker_connections 256; }
            http {
                access_log $DIR/access.log;
                client_body_temp_path $DIR/body;
                proxy_temp_path $DIR/proxy;
                fastcgi_temp_path $DIR/fastcgi;
                uwsgi_temp_path $DIR/uwsgi;
                scgi_temp_path $DIR/scgi;
                default_type text/plain;
            \(servers)}

            """
        return try Self.start("nginx", arguments: ["-p", "$DIR", "-c", "$DIR/nginx.conf"],
                              configuration: ["nginx.conf": configuration],
                              listening: [.tcp(0)] + sockets.map { .unix("$DIR/\($0).sock") })
    }

    /// The path of the Unix socket nginx listens on for `name` (see ``nginx(sockets:)``).
    public func socketPath(_ name: String) -> String {
        self.directory.appendingPathComponent("\(name).sock").path
    }

    /// tinyproxy, an HTTP proxy (plain requests and `CONNECT` tunnels) on ``port`` of 127.0.0.1,
    /// asking for HTTP Basic `credentials` when given. It adds `Via: 1.1 tinyproxy (…)` to the
    /// requests it forwards, and logs each request line in `tinyproxy.log` (``file(_:)``).
    public static func tinyproxy(credentials: TransferCredentials? = nil) throws -> ExternalServer {
        var configuration = """
            Port $PORT
            Listen 127.0.0.1
            Timeout 60
            LogFile "$DIR/tinyproxy.log"
            LogLevel Info
            MaxClients 64

            """
        if let credentials { configuration += "BasicAuth \(credentials.user) \(credentials.password)\n" }
        return try Self.start("tinyproxy", arguments: ["-d", "-c", "$DIR/tinyproxy.conf"],
                              configuration: ["tinyproxy.conf": configuration], listening: [.tcp(0)])
    }

    /// microsocks, a SOCKS5 proxy on ``port`` of 127.0.0.1, asking for user/password
    /// `credentials` (RFC 1929) when given. It logs each connection it makes for a client
    /// (`client[n] 127.0.0.1: connected to <host>:<port>`, the host as the client named it) in
    /// ``output(_:)``.
    public static func microsocks(credentials: TransferCredentials? = nil) throws -> ExternalServer {
        var arguments = ["-i", "127.0.0.1", "-p", "$PORT"]
        if let credentials { arguments += ["-u", credentials.user, "-P", credentials.password] }
        return try Self.start("microsocks", arguments: arguments, listening: [.tcp(0)])
    }
}
