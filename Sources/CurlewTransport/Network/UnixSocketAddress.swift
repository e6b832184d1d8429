/// A Unix domain socket to send a transfer's requests to, instead of a TCP connection to the URL's
/// host: how the Docker, Podman and systemd APIs are reached (`/var/run/docker.sock`).
///
/// The URL still names the request: its scheme, host (sent as `Host`) and path. Set it as
/// ``TransferOptions/unixSocket``:
///
/// ```swift
/// var request = TransferRequest(url: URL(string: "http://docker/v1.43/containers/json")!)
/// request.options.unixSocket = .path("/var/run/docker.sock")
/// ```
///
/// curl keys its pooled connections on the socket as well as the host: two sockets never share a
/// connection, and a connection to a socket is never reused for TCP (or the other way round).
public enum UnixSocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// A socket in the file system (`CURLOPT_UNIX_SOCKET_PATH`).
    case path(String)
    /// A socket in Linux's abstract namespace, named without the leading NUL
    /// (`CURLOPT_ABSTRACT_UNIX_SOCKET`).
    case abstract(String)

    /// The most bytes a socket name may have: `sun_path` holds 108 bytes, with a NUL after a path
    /// or before an abstract name.
    public static let maximumLength = 107

    /// The name as given, without its kind.
    public var name: String {
        switch self {
        case .path(let path): path
        case .abstract(let name): name
        }
    }

    /// `path` as given, or `@name` for an abstract socket (as `ss` and `netstat` show them).
    public var description: String {
        switch self {
        case .path(let path): path
        case .abstract(let name): "@" + name
        }
    }

    /// Throws ``TransferError/Code/invalidRequest`` for an empty name, a NUL in it, or one longer
    /// than ``maximumLength`` bytes (curl would fail it later, saying less).
    func validate() throws(TransferError) {
        let name = self.name
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw TransferError(.invalidRequest, "The Unix socket name \"\(self)\" is empty or contains a NUL character.")
        }
        guard name.utf8.count <= Self.maximumLength else {
            throw TransferError(.invalidRequest,
                                "The Unix socket name \"\(self)\" is longer than \(Self.maximumLength) bytes.")
        }
    }
}
