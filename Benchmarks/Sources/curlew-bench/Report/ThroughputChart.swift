import Foundation

/// Requests/s (or MB/s) against concurrency, one line per client, concurrency on a log₂ axis.
enum ThroughputChart {
    /// The chart of `scenario` (nil when it has fewer than two concurrencies or no values).
    static func render(scenario: MatrixScenario, aggregates: [Aggregate], clients: [String], repeats: Int) -> String? {
        let concurrencies = scenario.concurrencies.sorted()
        guard concurrencies.count > 1, let lowest = concurrencies.first, let highest = concurrencies.last,
              lowest > 0, highest > lowest
        else { return nil }
        let bulk = scenario.headline == .megabytesPerSecond
        func value(_ row: Aggregate) -> Double? {
            guard row.status == .ok else { return nil }
            return (bulk ? row.megabytesPerSecond : row.requestsPerSecond)?.median
        }
        let series: [(String, [(Int, Double)])] = clients.compactMap { client in
            let points = aggregates.filter { $0.scenario == scenario.id && $0.client == client }
                .compactMap { row in value(row).map { (row.concurrency, $0) } }
                .sorted { $0.0 < $1.0 }
            return points.isEmpty ? nil : (client, points)
        }
        let peak = series.flatMap { $0.1.map(\.1) }.max() ?? 0
        guard peak > 0 else { return nil }

        let (left, right, top, bottom) = (80.0, 600.0, 56.0, 400.0)
        var svg = SVGDocument(width: 840, height: 450)
        let unit = bulk ? "MB/s" : "requests/s"
        svg.text(left, 26, "\(scenario.title): \(unit) vs concurrency", size: 16, weight: "bold")
        svg.text(left, 44, "median of \(repeats) pass\(repeats == 1 ? "" : "es"); higher is better", size: 11, fill: "#666666")

        let ticks = AxisTicks.linear(upTo: peak)
        let top_ = ticks.last ?? peak
        func x(_ concurrency: Int) -> Double {
            left + (log2(Double(concurrency)) - log2(Double(lowest))) / (log2(Double(highest)) - log2(Double(lowest))) * (right - left)
        }
        func y(_ value: Double) -> Double { bottom - value / top_ * (bottom - top) }

        for tick in ticks {
            svg.line(left, y(tick), right, y(tick), stroke: "#e5e5e5")
            svg.text(left - 8, y(tick) + 4, Format.count(tick), size: 11, anchor: "end", fill: "#555555")
        }
        for concurrency in concurrencies {
            svg.line(x(concurrency), top, x(concurrency), bottom, stroke: "#f0f0f0")
            svg.text(x(concurrency), bottom + 18, String(concurrency), size: 11, anchor: "middle", fill: "#555555")
        }
        svg.line(left, bottom, right, bottom, stroke: "#888888")
        svg.line(left, top, left, bottom, stroke: "#888888")
        svg.text((left + right) / 2, bottom + 40, "concurrency (transfers in flight, log scale)", size: 12, anchor: "middle")
        svg.text(22, (top + bottom) / 2, unit, size: 12, anchor: "middle", rotate: -90)

        for (index, (client, points)) in series.enumerated() {
            let colour = ChartPalette.colour(for: client)
            svg.polyline(points.map { (x($0.0), y($0.1)) }, stroke: colour, width: client == "wrk" ? 1.5 : 2.2)
            for (concurrency, value) in points {
                svg.circle(x(concurrency), y(value), radius: 3.5, fill: colour,
                           title: "\(client), C=\(concurrency): \(Format.count(value)) \(unit)")
            }
            let legendY = top + 4 + Double(index) * 20
            svg.rect(right + 24, legendY - 9, 14, 10, fill: colour)
            svg.text(right + 44, legendY, client, size: 12)
        }
        return svg.rendered
    }
}
