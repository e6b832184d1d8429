#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

/// Turns SIGINT, SIGTERM and SIGHUP into an orderly exit: every child the runner started (clients and
/// servers) is stopped and its scratch folders removed, then the runner exits with 130 (128 + SIGINT),
/// 143 (SIGTERM) or 129 (SIGHUP).
enum InterruptHandler {
    /// Installs the handlers (once, from the main thread before any child is started); also ignores
    /// SIGPIPE so a child closing a pipe early cannot kill the runner.
    ///
    /// - Returns: The dispatch sources: keep them alive for as long as the handlers should work.
    static func install() -> [any DispatchSourceSignal] {
        signal(SIGPIPE, SIG_IGN)
        let queue = DispatchQueue(label: "curlew-bench.signals")
        return [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                Console.writeError("\ncurlew-bench: interrupted; stopping the processes it started\n")
                SpawnedProcesses.shared.stopAll(graceSeconds: 2)
                ScratchFolder.removeAll()
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
