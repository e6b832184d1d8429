import Foundation

/// The checks behind `/basic-auth/<user>/<password>` and `/digest-auth/<user>/<password>`: whether
/// a request's `Authorization` header proves it knows the password, and the challenge otherwise.
/// No I/O, so it is tested alone.
enum HTTPAuthentication {
    /// The realm of both challenges.
    static let realm = "curlew"
    /// The nonce of every Digest challenge. Fixed: the route checks the client's arithmetic, not
    /// replay protection.
    static let nonce = "6a0e7bdc1f2c4e8b9d3f5a7c"
    /// The opaque value of every Digest challenge, which the client must send back.
    static let opaque = "5ccc069c403ebaf9f0171e9517f40e41"

    /// `WWW-Authenticate` for a Basic challenge.
    static let basicChallenge = "Basic realm=\"\(realm)\""

    /// `WWW-Authenticate` for a Digest challenge (MD5, `qop=auth`).
    static let digestChallenge = "Digest realm=\"\(realm)\", qop=\"auth\", nonce=\"\(nonce)\", opaque=\"\(opaque)\", algorithm=MD5"

    /// Whether `authorization` is `Basic` with exactly `user:password`.
    static func acceptsBasic(_ authorization: String?, user: String, password: String) -> Bool {
        guard let authorization, authorization.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces))
        else { return false }
        return decoded == Data("\(user):\(password)".utf8)
    }

    /// Whether `authorization` is a Digest answer to ``digestChallenge`` for `user` and `password`,
    /// for a request of `method` to `uri` (RFC 7616, MD5; with `qop=auth` or, RFC 2069 style,
    /// without).
    static func acceptsDigest(_ authorization: String?, method: String, uri: String, user: String, password: String) -> Bool {
        guard let authorization, authorization.lowercased().hasPrefix("digest ") else { return false }
        let parameters = Self.parameters(String(authorization.dropFirst(7)))
        guard parameters["username"] == user, parameters["realm"] == realm, parameters["nonce"] == nonce,
              parameters["uri"] == uri, parameters["opaque"] == opaque, let response = parameters["response"]
        else { return false }
        let ha1 = MD5.hex("\(user):\(realm):\(password)".utf8)
        let ha2 = MD5.hex("\(method):\(uri)".utf8)
        let expected: String
        if let qop = parameters["qop"] {
            guard qop == "auth", let count = parameters["nc"], let clientNonce = parameters["cnonce"] else { return false }
            expected = MD5.hex("\(ha1):\(nonce):\(count):\(clientNonce):\(qop):\(ha2)".utf8)
        } else {
            expected = MD5.hex("\(ha1):\(nonce):\(ha2)".utf8)
        }
        return response.lowercased() == expected
    }

    /// `name=value` and `name="quoted, value"` pairs separated by commas.
    static func parameters(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = rest[..<end]
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end]
                rest = rest[end...]
            }
            result[name] = value.trimmingCharacters(in: .whitespaces)
        }
        return result
    }
}
