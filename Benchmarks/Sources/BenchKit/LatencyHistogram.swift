import Histogram

/// Latencies in microseconds, in an HdrHistogram with 3 significant digits (values up to one hour;
/// longer ones are recorded as one hour).
///
/// A value type: not synchronised; ``ClosedLoop`` records into it under its lock.
public struct LatencyHistogram: Sendable {
    private static let highest: UInt64 = 3_600_000_000
    private var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: LatencyHistogram.highest, numberOfSignificantValueDigits: .three)

    /// Creates an empty histogram.
    public init() {}

    /// Values recorded.
    public var count: UInt64 { self.histogram.totalCount }

    /// Records one latency.
    @inline(__always)
    public mutating func record(microseconds: UInt64) {
        self.histogram.record(Swift.min(microseconds, Self.highest))
    }

    /// Records one latency given in nanoseconds.
    @inline(__always)
    public mutating func record(nanoseconds: UInt64) {
        self.record(microseconds: nanoseconds / 1000)
    }

    /// p50, p90, p99, p99.9 and the maximum; all zero when nothing was recorded.
    public var percentiles: Percentiles {
        guard self.histogram.totalCount > 0 else { return .zero }
        return Percentiles(
            p50: Double(self.histogram.valueAtPercentile(50)),
            p90: Double(self.histogram.valueAtPercentile(90)),
            p99: Double(self.histogram.valueAtPercentile(99)),
            p999: Double(self.histogram.valueAtPercentile(99.9)),
            max: Double(self.histogram.max))
    }
}
