import CurlewTransport
import Foundation
import HTTPTypes

/// The headers every request serializer starts with, as AFNetworking's `AFHTTPRequestSerializer`
/// sets them.
public enum StandardHeaders {
    /// `Accept-Language` and `User-Agent`, as a new serializer's ``RequestSerializer/defaultHeaders``.
    public static var fields: HTTPFields {
        var fields = HTTPFields()
        if let languages = Self.acceptLanguage(Locale.preferredLanguages) {
            fields[.acceptLanguage] = languages
        }
        fields[.userAgent] = Self.userAgent
        return fields
    }

    /// `Accept-Language` for `languages` in order of preference: at most six, with `q` falling from
    /// 1 by 0.1 (`en-US;q=1, de;q=0.9`), as AFNetworking writes it. `nil` when none is usable (a
    /// language tag with characters other than letters, digits and `-`/`_` is skipped).
    public static func acceptLanguage(_ languages: [String]) -> String? {
        let usable = languages.filter { tag in
            !tag.isEmpty && tag.utf8.allSatisfy { byte in
                FormPercentEncoding.isUnreserved(byte) && byte != UInt8(ascii: ".") && byte != UInt8(ascii: "~")
            }
        }
        guard !usable.isEmpty else { return nil }
        return usable.prefix(6).enumerated().map { index, tag in
            "\(tag);q=\(index == 0 ? "1" : "0.\(10 - index)")"
        }.joined(separator: ", ")
    }

    /// `Curlew/<version> (<os> <release>)`, e.g. `Curlew/0.1.0 (Linux 6.1.0-28-amd64)`: the
    /// version from `CurlewVersion/string`, the system from `uname(2)`.
    public static let userAgent: String = {
        var system = utsname()
        guard uname(&system) == 0 else { return "Curlew/\(CurlewVersion.string)" }
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { bytes in
                let characters = bytes.prefix { $0 != 0 }
                // A comment in a User-Agent holds printable ASCII; parentheses would have to nest.
                return String(decoding: characters.filter { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "(")
                    && $0 != UInt8(ascii: ")") && $0 != UInt8(ascii: "\\") }, as: UTF8.self)
            }
        }
        return "Curlew/\(CurlewVersion.string) (\(text(system.sysname)) \(text(system.release)))"
    }()
}
