/// Starts a client through `/bin/sh`, which forks it, so that the client's own `ru_maxrss` is its own.
///
/// The kernel carries an address space's high-water mark across `exec` into the process's `ru_maxrss`.
/// A process the runner starts directly (`posix_spawn` shares the runner's address space until `exec`)
/// therefore reports a peak RSS of at least the runner's own, tens of MiB, which would swamp a C client's
/// 10 MiB. A child of a small process that forks is clean: its count starts at the shell's size, not the
/// runner's. The shell is started in a process group of its own, so signals reach the client too.
enum ForkingLauncher {
    /// The shell.
    static let shell = "/bin/sh"

    /// The shell's arguments to run `executable` with `arguments` in a forked child and exit with its status
    /// (`; exit $?` keeps the shell from replacing itself with the program).
    static func arguments(executable: String, arguments: [String]) -> [String] {
        ["-c", "\"$@\"; exit $?", "curlew-bench-launch", executable] + arguments
    }

    /// How the program ended, from how the shell ended: the shell exits with 128 + N when the program was
    /// killed by signal N, 127 when it could not be found, 126 when it could not be executed.
    static func describe(_ termination: ProcessOutcome.Termination) -> String {
        switch termination {
        case .exited(127): return "exit 127 (could not be started)"
        case .exited(126): return "exit 126 (not executable)"
        case .exited(let code) where code > 128 && code < 128 + 65: return "killed by signal \(code - 128)"
        default: return termination.description
        }
    }
}
