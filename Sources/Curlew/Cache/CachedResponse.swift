import CurlewTransport
import Foundation
import HTTPTypes

/// What an ``HTTPCache`` keeps about one stored response, apart from its body: enough to decide,
/// without I/O, whether it answers a request, is fresh, and how to revalidate it. `Codable`: the
/// disk store writes it at the start of each entry file.
struct CachedResponse: Sendable, Hashable, Codable {
    /// The primary cache key (``CacheKey``): the request's URL, scheme and host lowercased.
    var key: String
    /// The URL the response came from.
    var url: URL
    /// The stored head: status and header fields (never `Set-Cookie`: see ``CacheStorability``).
    var head: HTTPResponse
    /// When the request that fetched (or last revalidated) it was sent.
    var requestTime: Date
    /// When that response arrived.
    var responseTime: Date
    /// The request's values of the fields the response's `Vary` names (RFC 9111 §4.1).
    var varying: [VaryingField]
    /// Whether the stored body is the decoded form of a content-coded response.
    var bodyCoding: BodyCoding
    /// The body's length.
    var bodyLength: Int

    /// One field a response varies on, and the value the request had (`nil`: absent).
    struct VaryingField: Sendable, Hashable, Codable {
        /// The field name, lowercased.
        var name: String
        /// The request's values, joined with `", "`.
        var value: String?
    }

    /// How the stored body relates to the response's `Content-Encoding`.
    enum BodyCoding: String, Sendable, Hashable, Codable {
        /// The response had no content coding.
        case identity
        /// The response was content-coded and curl decoded it (automatic decompression).
        case decoded
        /// The response was content-coded and delivered as it came (the request set its own
        /// `Accept-Encoding`).
        case encoded
    }

    /// About how many bytes the entry takes: the body, the key and the header fields. What the
    /// cache's byte limit counts.
    var size: Int {
        var size = self.bodyLength + self.key.utf8.count + 64
        for field in self.head.headerFields {
            size += field.name.rawName.utf8.count + field.value.utf8.count + 4
        }
        for field in self.varying {
            size += field.name.utf8.count + (field.value?.utf8.count ?? 0) + 4
        }
        return size
    }
}
