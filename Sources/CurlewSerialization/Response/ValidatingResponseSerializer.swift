import Foundation
import HTTPTypes

/// A response serializer that checks the status code and the content type before it decodes:
/// the validation of AFNetworking's `AFHTTPResponseSerializer`, shared by every Curlew serializer
/// but ``DataResponseSerializer``.
///
/// The rules, in this order:
/// 1. A status code outside ``acceptableStatusCodes`` (200–299 by default) fails with
///    ``ResponseSerializationError/Reason/unacceptableStatusCode(_:)``. If the content type is
///    acceptable and the body still decodes, the decoded value rides along as
///    ``ResponseSerializationError/parsedBody`` (AFNetworking's JSON serializer parses an error
///    body too).
/// 2. A non-empty body whose media type (the `Content-Type` without parameters, compared
///    case-insensitively) is not in ``acceptableContentTypes`` fails with
///    ``ResponseSerializationError/Reason/unacceptableContentType(_:)``; a missing `Content-Type`
///    is unacceptable too. `nil` accepts any type.
/// 3. An **empty** body is never refused for its content type: a 204 has none, and an empty 200
///    with `text/html` carries no HTML to misread. AFNetworking reaches the same outcome
///    differently (its validation fails but reports no error, so the serializer returns `nil`);
///    here what an empty body means is each serializer's rule (``ResponseSerializationError/Reason/emptyBody``,
///    `JSONValue.null`, an empty string…).
///
/// ```swift
/// var serializer = JSONResponseSerializer()
/// serializer.acceptableStatusCodes.insert(integersIn: 400..<500)   // decode client errors too
/// serializer.acceptableContentTypes?.insert("application/problem+json")
/// ```
public protocol ValidatingResponseSerializer: ResponseSerializer {
    /// The status codes that count as success; 200–299 by default.
    var acceptableStatusCodes: IndexSet { get set }
    /// The media types accepted for a non-empty body, lowercase without parameters
    /// (`application/json`); `nil` accepts any.
    var acceptableContentTypes: Set<String>? { get set }
}

extension ValidatingResponseSerializer {
    /// Checks the status code and content type as the protocol describes.
    ///
    /// - Throws: ``ResponseSerializationError`` with
    ///   ``ResponseSerializationError/Reason/unacceptableStatusCode(_:)`` or
    ///   ``ResponseSerializationError/Reason/unacceptableContentType(_:)``.
    public func validate(response: HTTPResponse, body: Data?, url: URL?) throws(ResponseSerializationError) {
        if let refusal = self.refusal(response: response, body: body, url: url) {
            throw refusal
        }
    }

    /// Validates, then decodes with `decode`; on an unacceptable status only, tries `decode` as
    /// well and attaches the result to the error.
    func validatedValue(
        response: HTTPResponse, body: Data?, url: URL?,
        decode: () throws(ResponseSerializationError) -> Output
    ) throws(ResponseSerializationError) -> Output {
        guard var refusal = self.refusal(response: response, body: body, url: url) else {
            return try decode()
        }
        if case .unacceptableStatusCode = refusal.reason, self.acceptsContentType(of: response, body: body) {
            refusal.parsedBody = try? decode()
        }
        throw refusal
    }

    private func refusal(response: HTTPResponse, body: Data?, url: URL?) -> ResponseSerializationError? {
        if !self.acceptableStatusCodes.contains(response.status.code) {
            return ResponseSerializationError(.unacceptableStatusCode(response.status.code), response: response, body: body, url: url)
        }
        if !self.acceptsContentType(of: response, body: body) {
            let type = response.headerFields[.contentType].map { ContentType($0).mediaType }
            return ResponseSerializationError(.unacceptableContentType(type), response: response, body: body, url: url)
        }
        return nil
    }

    private func acceptsContentType(of response: HTTPResponse, body: Data?) -> Bool {
        guard let acceptable = self.acceptableContentTypes, let body, !body.isEmpty else { return true }
        guard let value = response.headerFields[.contentType] else { return false }
        let type = ContentType(value).mediaType
        return acceptable.contains { $0.lowercased() == type }
    }
}

/// Whether an empty body is a value for `response` to `requestMethod`: its status is one of
/// `statusCodes` (204, 205) or the method one of `requestMethods` (HEAD), as Alamofire's
/// `emptyResponseCodes` and `emptyRequestMethods` decide.
func isEmptyBodyExpected(
    _ response: HTTPResponse, requestMethod: HTTPRequest.Method?,
    statusCodes: Set<Int>, requestMethods: Set<HTTPRequest.Method>
) -> Bool {
    statusCodes.contains(response.status.code) || requestMethod.map(requestMethods.contains) == true
}
