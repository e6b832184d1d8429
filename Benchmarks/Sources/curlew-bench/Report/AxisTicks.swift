import Foundation

/// Round tick values for chart axes.
enum AxisTicks {
    /// 0, then steps of 1, 2 or 5 × 10ⁿ up to the first tick at or above `maximum` (about five ticks).
    static func linear(upTo maximum: Double) -> [Double] {
        guard maximum > 0, maximum.isFinite else { return [0, 1] }
        let rough = maximum / 5
        let power = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? rough
        var ticks: [Double] = [0]
        while let last = ticks.last, last < maximum { ticks.append(last + step) }
        return ticks
    }

    /// Powers of ten from below `minimum` to above `maximum` (both positive).
    static func decades(from minimum: Double, to maximum: Double) -> [Double] {
        guard minimum > 0, maximum >= minimum, minimum.isFinite, maximum.isFinite else { return [1, 10] }
        let low = floor(log10(minimum))
        let high = max(low + 1, ceil(log10(maximum)))
        return stride(from: low, through: high, by: 1).map { pow(10, $0) }
    }
}
