import CurlewTransport
import Foundation
import HTTPTypes

/// Sends parameters as an XML property list: AFNetworking's `AFPropertyListRequestSerializer`.
///
/// Like ``JSONRequestSerializer``, with `Content-Type: application/x-plist` and the body written by
/// ``encoder`` (XML format by default). A property list's top level must be a dictionary or an
/// array, and it has no null: ``ParameterValue/null`` is an error rather than a placeholder string.
public struct PropertyListRequestSerializer: RequestSerializer {
    /// The query-string behaviour (and its settings) for the methods that encode parameters in the URI.
    public var http = HTTPRequestSerializer()
    /// Encodes the body. `PropertyListEncoder` is a class: configure it before sharing the serializer.
    public var encoder: PropertyListEncoder

    /// Creates a serializer that writes XML property lists.
    public init() {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        encoder.userInfo[.curlewRefusesNull] = true
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

    /// The methods whose parameters go into the URL's query rather than a property-list body.
    public var methodsEncodingParametersInURI: Set<HTTPRequest.Method> {
        get { self.http.methodsEncodingParametersInURI }
        set { self.http.methodsEncodingParametersInURI = newValue }
    }

    /// `request` with the defaults applied and `parameters` in its query or as a property-list body.
    ///
    /// - Throws: ``RequestSerializationError`` with ``RequestSerializationError/Code/invalidParameters``
    ///   when the parameters cannot be encoded.
    public func serialize(_ request: TransferRequest, parameters: (any Encodable & Sendable)?) throws(RequestSerializationError) -> TransferRequest {
        try self.http.serialize(request, parameters: parameters, asBodyOfType: "application/x-plist") {
            try self.encoder.encode($0)
        }
    }
}
