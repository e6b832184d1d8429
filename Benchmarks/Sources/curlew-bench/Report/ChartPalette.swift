/// Colours for chart series: distinguishable, and stable per client across charts.
enum ChartPalette {
    /// Twelve colours (Tableau 10 plus two).
    static let colours = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
        "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f3b73", "#8c564b",
    ]

    /// The colour of `client` (by its position among every known client, so it never changes).
    static func colour(for client: String) -> String {
        let index = BenchClient.all.firstIndex(where: { $0.name == client })
            ?? client.utf8.reduce(0) { ($0 * 31 + Int($1)) % 1_000 }
        return self.colours[index % self.colours.count]
    }

    /// Colours of the latency percentiles, light to dark.
    static let percentiles = ["#9ecae1", "#4292c6", "#08519c", "#08306b"]
}
