import Foundation

/// A tiny SVG writer: enough for line and bar charts that GitHub renders (no scripts, no external
/// fonts, a white background so they read in dark mode too). Attributes are single-quoted.
struct SVGDocument {
    /// Canvas width, pixels.
    var width: Double
    /// Canvas height, pixels.
    var height: Double
    private var elements: [String] = []

    /// An empty canvas with a white background.
    init(width: Double, height: Double) {
        self.width = width
        self.height = height
        self.elements.append("<rect x='0' y='0' width='\(Self.n(width))' height='\(Self.n(height))' fill='#ffffff'/>")
    }

    /// A line.
    mutating func line(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, width: Double = 1, dashed: Bool = false
    ) {
        self.elements.append(
            "<line x1='\(Self.n(x1))' y1='\(Self.n(y1))' x2='\(Self.n(x2))' y2='\(Self.n(y2))' "
                + "stroke='\(stroke)' stroke-width='\(Self.n(width))'" + (dashed ? " stroke-dasharray='4 3'" : "") + "/>"
        )
    }

    /// A polyline through `points`.
    mutating func polyline(_ points: [(Double, Double)], stroke: String, width: Double = 2) {
        let list = points.map { "\(Self.n($0.0)),\(Self.n($0.1))" }.joined(separator: " ")
        self.elements.append(
            "<polyline points='\(list)' fill='none' stroke='\(stroke)' stroke-width='\(Self.n(width))' stroke-linejoin='round'/>"
        )
    }

    /// A filled circle, with a tooltip.
    mutating func circle(_ x: Double, _ y: Double, radius: Double, fill: String, title: String? = nil) {
        self.elements.append(
            "<circle cx='\(Self.n(x))' cy='\(Self.n(y))' r='\(Self.n(radius))' fill='\(fill)'>"
                + Self.tooltip(title) + "</circle>"
        )
    }

    /// A filled rectangle, with a tooltip.
    mutating func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String, title: String? = nil) {
        self.elements.append(
            "<rect x='\(Self.n(x))' y='\(Self.n(y))' width='\(Self.n(max(0, width)))' height='\(Self.n(max(0, height)))' "
                + "fill='\(fill)'>" + Self.tooltip(title) + "</rect>"
        )
    }

    /// Text; `anchor` is `start`, `middle` or `end`; `rotate` in degrees about the anchor point.
    mutating func text(
        _ x: Double, _ y: Double, _ content: String, size: Double = 12, anchor: String = "start",
        weight: String = "normal", fill: String = "#222222", rotate: Double? = nil
    ) {
        let transform = rotate.map { " transform='rotate(\(Self.n($0)) \(Self.n(x)) \(Self.n(y)))'" } ?? ""
        self.elements.append(
            "<text x='\(Self.n(x))' y='\(Self.n(y))' font-size='\(Self.n(size))' text-anchor='\(anchor)' "
                + "font-weight='\(weight)' fill='\(fill)'\(transform)>" + Self.escape(content) + "</text>"
        )
    }

    /// The document's text.
    var rendered: String {
        "<svg xmlns='http://www.w3.org/2000/svg' width='\(Self.n(self.width))' height='\(Self.n(self.height))' "
            + "viewBox='0 0 \(Self.n(self.width)) \(Self.n(self.height))' font-family='Helvetica, Arial, sans-serif'>\n"
            + self.elements.joined(separator: "\n") + "\n</svg>\n"
    }

    private static func tooltip(_ title: String?) -> String {
        title.map { "<title>\(Self.escape($0))</title>" } ?? ""
    }

    /// A coordinate with at most one decimal.
    private static func n(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)
    }

    /// XML text escaping.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "'", with: "&apos;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
