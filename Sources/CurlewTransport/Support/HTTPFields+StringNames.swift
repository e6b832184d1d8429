import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, compared case-insensitively (several joined with
    /// `", "`), or `nil` when there is none or `name` is not a valid field name: `headers["X-Request-Id"]`.
    public subscript(_ name: String) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        return self[fieldName]
    }
}
