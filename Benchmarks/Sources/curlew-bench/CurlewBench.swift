import ArgumentParser

/// `curlew-bench`: the benchmark runner. `matrix` (the default) measures wall-clock figures of every
/// client in one interleaved run; `counts` measures what repeats from run to run on a shared machine:
/// instructions and system calls per request.
@main
struct CurlewBench: ParsableCommand {
    /// The command's name, abstract and subcommands for `--help`.
    static let configuration = CommandConfiguration(
        commandName: "curlew-bench",
        abstract: "Benchmarks Curlew's backends against its peers.",
        subcommands: [MatrixCommand.self, CountsCommand.self],
        defaultSubcommand: MatrixCommand.self
    )
}
