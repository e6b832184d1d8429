import Foundation

/// Horizontal grouped bars, one group per client, one bar per percentile, on a log-scaled time axis:
/// latency (p50, p90, p99, p99.9) or main-thread lateness (p50, p99, max).
enum PercentileChart {
    /// One client's bars: a value (µs) per series, nil where there is none.
    struct Row {
        var client: String
        var values: [Double?]
    }

    /// The chart; nil when there is nothing to draw.
    static func render(title: String, subtitle: String, series: [String], rows: [Row]) -> String? {
        let values = rows.flatMap { $0.values.compactMap { $0 } }.filter { $0 > 0 }
        guard let smallest = values.min(), let largest = values.max() else { return nil }
        let decades = AxisTicks.decades(from: smallest, to: largest)
        guard let first = decades.first, let last = decades.last, last > first else { return nil }

        let barHeight = 7.0
        let groupHeight = Double(series.count) * barHeight + 10
        let (left, right, top) = (200.0, 780.0, 76.0)
        let bottom = top + Double(rows.count) * groupHeight
        var svg = SVGDocument(width: 820, height: bottom + 54)
        svg.text(20, 26, title, size: 16, weight: "bold")
        svg.text(20, 44, subtitle, size: 11, fill: "#666666")
        for (index, name) in series.enumerated() {
            let x = left + Double(index) * 80
            svg.rect(x, 54, 14, 10, fill: ChartPalette.percentiles[index % ChartPalette.percentiles.count])
            svg.text(x + 20, 63, name, size: 12)
        }
        func x(_ value: Double) -> Double {
            left + (log10(max(value, first)) - log10(first)) / (log10(last) - log10(first)) * (right - left)
        }
        for decade in decades {
            svg.line(x(decade), top - 4, x(decade), bottom, stroke: "#e5e5e5")
            svg.text(x(decade), bottom + 18, Format.decade(decade), size: 11, anchor: "middle", fill: "#555555")
        }
        svg.text((left + right) / 2, bottom + 40, "microseconds, log scale (shorter is better)", size: 12, anchor: "middle")
        for (rowIndex, row) in rows.enumerated() {
            let groupTop = top + Double(rowIndex) * groupHeight
            svg.text(left - 10, groupTop + groupHeight / 2 + 1, row.client, size: 12, anchor: "end")
            for (index, value) in row.values.enumerated() {
                guard let value, value > 0 else { continue }
                let name = index < series.count ? series[index] : ""
                svg.rect(left, groupTop + 4 + Double(index) * barHeight, x(value) - left, barHeight - 1,
                         fill: ChartPalette.percentiles[index % ChartPalette.percentiles.count],
                         title: "\(row.client) \(name): \(Format.micros(value))")
            }
        }
        svg.line(left, top - 4, left, bottom, stroke: "#888888")
        return svg.rendered
    }
}
