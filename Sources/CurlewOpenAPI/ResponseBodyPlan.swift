import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Whether a response has a body for the generated client, and its length when it is known.
enum ResponseBodyPlan: Equatable {
    /// No body: the answer to `HEAD`, a 204 or a 304 (RFC 9110 §6.4.1), whatever its header fields say.
    case none
    /// A body streamed as it arrives, of `length`.
    case stream(length: HTTPBody.Length)

    /// The plan for `response` to a `method` request.
    ///
    /// The length comes from `Content-Length` when it is one valid number and the body is not
    /// content-coded: curl decodes a `Content-Encoding` as it receives, so the bytes delivered are
    /// not the bytes counted.
    init(method: HTTPRequest.Method, response: HTTPResponse) {
        if method == .head || response.status.code == 204 || response.status.code == 304 {
            self = .none
            return
        }
        let encodings = response.headerFields[values: .contentEncoding]
        let encoded = encodings.contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() != "identity" }
        }
        let lengths = response.headerFields[values: .contentLength]
        guard !encoded, let first = lengths.first, lengths.allSatisfy({ $0 == first }),
              first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let length = Int64(first) else {
            self = .stream(length: .unknown)
            return
        }
        self = .stream(length: .known(length))
    }
}
