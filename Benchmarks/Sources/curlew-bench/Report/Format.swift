import Foundation

/// How numbers read in the report: three significant figures, explicit units, `—` for nothing.
enum Format {
    /// Shown where there is no value.
    static let none = "—"

    /// `0.42`, `12.3`, `951`, `52.1k`, `1.20M`.
    static func count(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 999_500 { return self.significant(value / 1_000_000) + "M" }
        if magnitude >= 9_995 { return self.significant(value / 1_000) + "k" }
        if magnitude >= 1_000 { return String(format: "%.2fk", value / 1_000) }
        if value == value.rounded() { return String(Int(value)) }
        return self.significant(value)
    }

    /// Three significant figures without an exponent: `0.123`, `1.23`, `12.3`, `123`, `1234`.
    static func significant(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude == 0 { return "0" }
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        if magnitude >= 0.01 { return String(format: "%.3f", value) }
        return String(format: "%.2g", value)
    }

    /// A duration given in microseconds: `41 µs`, `2.20 ms`, `1.35 s`.
    static func micros(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_000_000 { return self.significant(value / 1_000_000) + " s" }
        if magnitude >= 1_000 { return self.significant(value / 1_000) + " ms" }
        return self.significant(value) + " µs"
    }

    /// A tick label for a power of ten given in microseconds: `1 µs`, `100 µs`, `1 ms`, `10 ms`, `1 s`.
    static func decade(_ value: Double) -> String {
        if value >= 1_000_000 { return String(format: "%g s", value / 1_000_000) }
        if value >= 1_000 { return String(format: "%g ms", value / 1_000) }
        return String(format: "%g µs", value)
    }

    /// Seconds as typed: `2`, `0.5`.
    static func seconds(_ value: Double) -> String {
        String(format: "%g", value)
    }

    /// `52.1k ±5%` (the median and half the range in percent; no ± for a single value).
    static func spread(_ summary: Summary?, _ body: (Double) -> String = Format.count) -> String {
        guard let summary else { return self.none }
        let median = body(summary.median)
        guard summary.count > 1 else { return median }
        return median + " ±" + String(format: "%.0f", summary.spreadPercent.rounded()) + "%"
    }

    /// The median alone.
    static func median(_ summary: Summary?, _ body: (Double) -> String = Format.significant) -> String {
        summary.map { body($0.median) } ?? self.none
    }

    /// A ratio: `0.53 (0.49–0.58)`, the median and the range over repeats.
    static func ratio(_ summary: Summary?) -> String {
        guard let summary else { return self.none }
        let median = String(format: "%.2f", summary.median)
        guard summary.count > 1 else { return median }
        return median + " (" + String(format: "%.2f", summary.min) + "–" + String(format: "%.2f", summary.max) + ")"
    }

    /// A Markdown table cell: pipes and newlines escaped.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
