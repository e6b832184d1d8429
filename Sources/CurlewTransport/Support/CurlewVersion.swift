/// Curlew's version, in one place: the `User-Agent` that request serializers send carries it.
public enum CurlewVersion {
    /// The version of this release, for example `"0.1.0"`.
    public static let string = "0.1.0"
}
