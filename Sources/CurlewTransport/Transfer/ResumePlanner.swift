import Foundation
import HTTPTypes

/// What identifies a response's entity, so a paused body can continue with `Range` + `If-Range`.
struct ResumeValidator: Hashable {
    /// A strong entity tag, when the response had one.
    var entityTag: String?
    /// `Last-Modified`, when the response had one.
    var lastModified: String?

    /// The `If-Range` value: the strong ETag, else the date.
    var ifRange: String { self.entityTag ?? self.lastModified ?? "" }

    /// A validator made of known values.
    init(entityTag: String?, lastModified: String?) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// The validator of `head`, or `nil` when its body cannot be continued by range: no strong
    /// validator, the server refuses ranges (`Accept-Ranges: none`), or the body is content-encoded
    /// (ranges address encoded bytes while curl delivers decoded ones).
    init?(_ head: HTTPResponse) {
        guard head.status.code == 200 else { return nil }
        if let acceptRanges = head.headerFields[.acceptRanges], acceptRanges.lowercased() == "none" { return nil }
        if let encoding = head.headerFields[.contentEncoding], encoding.lowercased() != "identity" { return nil }
        let tag = head.headerFields[.eTag].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let date = head.headerFields[.lastModified]
        guard tag != nil || date != nil else { return nil }
        self.entityTag = tag
        self.lastModified = date
    }
}

/// What to do with the response to a range request that continues a paused body. No I/O.
enum ResumePlanner {
    enum Decision: Hashable {
        /// 206 for the same entity from the requested offset: append the body.
        case append
        /// 200 for the same entity (the server ignored the range): drop this many leading bytes.
        case skip(Int64)
        /// 200 (or another final status) for a different entity: discard what was kept and take this body.
        case restart
        /// The range reply cannot be trusted (wrong offset, 416, another entity's 206): discard this
        /// response and fetch again without a range.
        case retryWithoutRange
    }

    static func decide(_ head: HTTPResponse, for request: ResumeRequest) -> Decision {
        let sameEntity = Self.isSameEntity(head, request.validator)
        switch head.status.code {
        case 206:
            guard sameEntity, let start = Self.contentRangeStart(head.headerFields[.contentRange]),
                  start == request.offset else {
                return .retryWithoutRange
            }
            return .append
        case 200:
            return sameEntity ? .skip(request.offset) : .restart
        case 416:
            return .retryWithoutRange
        default:
            return .restart
        }
    }

    private static func isSameEntity(_ head: HTTPResponse, _ validator: ResumeValidator) -> Bool {
        if let tag = validator.entityTag {
            return head.headerFields[.eTag] == tag
        }
        if let date = validator.lastModified {
            return head.headerFields[.lastModified] == date
        }
        return false
    }

    /// The first byte position of `Content-Range: bytes a-b/total`.
    static func contentRangeStart(_ value: String?) -> Int64? {
        guard let value else { return nil }
        let trimmed = value.drop(while: { $0 == " " })
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash].trimmingCharacters(in: .whitespaces))
    }
}
