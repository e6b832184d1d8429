/// The validators of `.entity`: how its `ETag` and `Last-Modified` follow its `version`.
enum EntityValidators {
    /// Version 1 of every entity was last modified on 2000-01-01 00:00:00 UTC; version `v`, `v - 1` days later.
    static let baseModificationTime: Int64 = 946_684_800

    /// `base` for version 1. For another version `v`, `-v<v>` is added inside the closing quote:
    /// `"v1"` becomes `"v1-v2"` (unquoted tags just get the suffix).
    static func etag(base: String?, version: Int) -> String? {
        guard let base else { return nil }
        guard version != 1 else { return base }
        if base.count >= 2, base.hasSuffix("\"") {
            return String(base.dropLast()) + "-v\(version)\""
        }
        return base + "-v\(version)"
    }

    static func lastModified(version: Int) -> String {
        HTTPDate.imfFixdate(secondsSince1970: baseModificationTime + Int64(version - 1) * 86_400)
    }
}
