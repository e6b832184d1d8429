extension JSONValue: EmptyResponse {
    /// ``JSONValue/null``: a 204 (or any response to HEAD) decodes as JSON's null, as
    /// `JSONResponseSerializer` makes it, instead of failing for want of a body.
    public static func emptyValue() -> JSONValue { .null }
}
