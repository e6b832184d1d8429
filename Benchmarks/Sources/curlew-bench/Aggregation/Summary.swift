/// The repeats of one figure: their median and range.
struct Summary: Codable, Sendable, Hashable {
    /// The median of the values (the mean of the middle two for an even count).
    var median: Double
    /// The smallest value.
    var min: Double
    /// The largest value.
    var max: Double
    /// How many values.
    var count: Int

    /// Half the range as a percentage of the median (`±x%`); 0 for one value or a zero median.
    var spreadPercent: Double {
        self.median != 0 && self.count > 1 ? (self.max - self.min) / 2 / abs(self.median) * 100 : 0
    }

    /// The summary of `values` (non-finite ones dropped); nil when none is left.
    init?(_ values: [Double]) {
        let sorted = values.filter(\.isFinite).sorted()
        guard let first = sorted.first, let last = sorted.last else { return nil }
        let middle = sorted.count / 2
        self.median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        self.min = first
        self.max = last
        self.count = sorted.count
    }
}
