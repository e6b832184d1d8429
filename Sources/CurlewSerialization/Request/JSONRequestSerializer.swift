import CurlewTransport
import Foundation
import HTTPTypes

/// Sends parameters as a JSON body: AFNetworking's `AFJSONRequestSerializer`.
///
/// For the methods in ``methodsEncodingParametersInURI`` (GET, HEAD, DELETE) parameters still go
/// into the query string, as ``HTTPRequestSerializer`` writes it. For the others, non-`nil`
/// parameters become the body, encoded by ``encoder`` (keys sorted by default, so the body is
/// stable), with `Content-Type: application/json` unless the request has a content type. A value
/// JSON cannot hold — a NaN or infinite number — is an error, never sent.
///
/// ```swift
/// let serializer = JSONRequestSerializer()
/// let request = try serializer.request(method: .post, url: url, parameters: ["name": "curlew", "tags": ["a", "b"]])
/// // body {"name":"curlew","tags":["a","b"]}
/// ```
public struct JSONRequestSerializer: RequestSerializer {
    /// The query-string behaviour (and its settings) for the methods that encode parameters in the URI.
    public var http = HTTPRequestSerializer()
    /// Encodes the body. `JSONEncoder` is a class: configure it before sharing the serializer.
    public var encoder: JSONEncoder

    /// Creates a serializer whose encoder sorts keys and leaves `/` unescaped.
    public init() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.encoder = encoder
    }

    public var defaultHeaders: HTTPFields {
        get { self.http.defaultHeaders }
        set { self.http.defaultHeaders = newValue }
    }

    public var secretHeaderNames: Set<HTTPField.Name> {
        get { self.http.secretHeaderNames }
        set { self.http.secretHeaderNames = newValue }
    }

    public var timeout: Duration? {
        get { self.http.timeout }
        set { self.http.timeout = newValue }
    }

    /// The methods whose parameters go into the URL's query rather than a JSON body.
    public var methodsEncodingParametersInURI: Set<HTTPRequest.Method> {
        get { self.http.methodsEncodingParametersInURI }
        set { self.http.methodsEncodingParametersInURI = newValue }
    }

    /// `request` with the defaults applied and `parameters` in its query or as a JSON body.
    ///
    /// - Throws: ``RequestSerializationError`` with ``RequestSerializationError/Code/invalidParameters``
    ///   (and the coding path) when the parameters cannot be encoded.
    public func serialize(_ request: TransferRequest, parameters: (any Encodable & Sendable)?) throws(RequestSerializationError) -> TransferRequest {
        try self.http.serialize(request, parameters: parameters, asBodyOfType: "application/json") {
            try self.encoder.encode($0)
        }
    }
}
