import CurlewTransport
import HTTPTypes

/// Which request a stored response may answer beyond its URL: the fields its `Vary` names (RFC
/// 9111 §4.1), and the form of its body. No I/O.
enum CacheVariant {
    /// Request fields a response varying on them is never stored for: secrets, which the cache would
    /// have to keep (in memory or on disk) to match them, and `Cookie`, which curl adds from a cookie
    /// jar out of the cache's sight.
    static let unstorableVaryingNames: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The lowercased field names of `head`'s `Vary` fields, or `nil` for `Vary: *` (a response
    /// that varies on more than the request, never stored).
    static func varyingNames(of head: HTTPResponse) -> [String]? {
        var names: [String] = []
        for value in head.headerFields[values: .vary] {
            for item in value.split(separator: ",") {
                let name = String(item).trimmingWhitespace().lowercased()
                guard name != "*" else { return nil }
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
        }
        return names
    }

    /// The request's values of the fields `names` names.
    static func fields(of request: HTTPRequest, named names: [String]) -> [CachedResponse.VaryingField] {
        names.map { name in
            let values = HTTPField.Name(name).map { request.headerFields[values: $0] } ?? []
            return CachedResponse.VaryingField(
                name: name, value: values.isEmpty ? nil : values.map { $0.trimmingWhitespace() }.joined(separator: ", "))
        }
    }

    /// Whether curl decodes the body of a response to `request` (automatic decompression, and no
    /// `Accept-Encoding` of the request's own).
    static func decodesBody(_ request: TransferRequest) -> Bool {
        request.options.automaticDecompression && request.head.headerFields[.acceptEncoding] == nil
    }

    /// The form of the body a response to `request` with `head` delivers.
    static func bodyCoding(of head: HTTPResponse, for request: TransferRequest) -> CachedResponse.BodyCoding {
        guard let coding = head.headerFields[.contentEncoding], coding.lowercased() != "identity" else { return .identity }
        return Self.decodesBody(request) ? .decoded : .encoded
    }

    /// Whether `entry` may answer `request`: the request has the same values of the varying fields,
    /// and wants the body in the form stored (a decoded body cannot answer a request that asked for
    /// the content coding itself, nor the reverse).
    static func matches(_ entry: CachedResponse, _ request: TransferRequest) -> Bool {
        switch entry.bodyCoding {
        case .identity: break
        case .decoded: guard Self.decodesBody(request) else { return false }
        case .encoded: guard !Self.decodesBody(request) else { return false }
        }
        return Self.fields(of: request.head, named: entry.varying.map(\.name)) == entry.varying
    }
}
