import CurlewTransport
import HTTPTypes

/// Revalidating a stored response (RFC 9111 §4.3): the conditional fields to send, and the stored
/// head a 304 makes. No I/O.
enum CacheValidation {
    /// Fields a 304 never changes in a stored head (RFC 9111 §3.2): the body's framing and coding —
    /// the stored body was received under them — and fields never stored.
    static let fieldsKeptOn304: Set<HTTPField.Name> = Set([.contentLength, .contentEncoding, .contentRange]
        + CacheStorability.unstoredFields)

    /// `If-None-Match` with the entry's `ETag` and `If-Modified-Since` with its `Last-Modified`, for
    /// those it has; empty when it has no validator (it can then only be replaced).
    static func conditions(for entry: CachedResponse) -> HTTPFields {
        var fields = HTTPFields()
        if let tag = entry.head.headerFields[.eTag] { fields[.ifNoneMatch] = tag }
        if let date = entry.head.headerFields[.lastModified] { fields[.ifModifiedSince] = date }
        return fields
    }

    /// The stored head updated with a 304's fields, each replacing the stored ones of its name
    /// (but those in ``fieldsKeptOn304``), and with the 304's `Date` and `Age` or none; `nil` when the 304 names another response than the
    /// stored one (its strong `ETag` differs), which then cannot be used.
    static func updated(_ stored: HTTPResponse, with notModified: HTTPResponse) -> HTTPResponse? {
        if let tag = notModified.headerFields[.eTag], let storedTag = stored.headerFields[.eTag],
           !tag.hasPrefix("W/"), tag != storedTag {
            return nil
        }
        var head = stored
        // `Date` and `Age` describe the latest response, from which the entry's age is now computed.
        head.headerFields[.date] = nil
        head.headerFields[.age] = nil
        var replaced = Set<HTTPField.Name>()
        for field in notModified.headerFields where !Self.fieldsKeptOn304.contains(field.name) {
            if replaced.insert(field.name).inserted { head.headerFields[field.name] = nil }
            head.headerFields.append(field)
        }
        return head
    }
}
