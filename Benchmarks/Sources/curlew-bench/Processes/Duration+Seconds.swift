extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = self.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A duration of `seconds` (a floating-point number of seconds; negative values give zero).
    static func seconds(double seconds: Double) -> Duration {
        .microseconds(Int64(max(0, seconds) * 1_000_000))
    }
}
