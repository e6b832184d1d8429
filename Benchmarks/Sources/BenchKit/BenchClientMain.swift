import Foundation

/// The `main` of every Swift client binary: parses the command line, makes the named client, runs
/// the closed loop with the main thread in its run loop, prints one ``ClientResult`` line and exits.
///
/// ```swift
/// BenchClientMain.run(clients: [
///     "urlsession": { options throws(ClientSetupError) in try URLSessionClient(options: options) },
/// ])
/// ```
///
/// Exit status: 0 after printing a result (also when requests failed, and for an unsupported
/// scenario); 2 for bad arguments or an unknown client; 1 when the client could not be set up.
public enum BenchClientMain {
    /// Makes a client for the options (on the main thread).
    public typealias Factory = (BenchOptions) throws(ClientSetupError) -> any LoadClient

    /// How long the in-flight requests may take to finish after the measured phase.
    static let drainTimeoutSeconds = 10.0
    /// How long a client's shutdown may take before the process exits anyway.
    static let shutdownTimeoutSeconds = 10.0

    /// Runs the client named by `--client` among `clients`. Call from the main thread; never returns.
    public static func run(clients: [String: Factory]) -> Never {
        let options: BenchOptions
        do {
            options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            StandardError.write("error: \(error.message)")
            exit(2)
        }
        guard let factory = clients[options.client] else {
            let names = clients.keys.sorted().joined(separator: ", ")
            StandardError.write("error: unknown client \"\(options.client)\" (this binary has: \(names))")
            exit(2)
        }

        let sampler = ThreadSampler()
        sampler.start()
        let client: any LoadClient
        do {
            client = try factory(options)
        } catch {
            switch error {
            case .unsupported(let note):
                ClientResult.unsupported(options, note: note).printAsLine()
                exit(0)
            case .failed(let message):
                StandardError.write("error: \(options.client): \(message)")
                exit(1)
            }
        }

        // Set up, nothing sent yet: the baseline a streamed body's peak RSS is read against.
        let startupRSSKiB = ResidentSet.currentKiB()
        let run = ClientRun(options: options, client: client, sampler: sampler, startupRSSKiB: startupRSSKiB)
        let result = run.execute()
        result.printAsLine()
        exit(0)
    }
}
