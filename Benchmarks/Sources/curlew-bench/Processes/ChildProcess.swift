#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A process the runner started with `posix_spawn`, known by its PID and by nothing else: the runner
/// only ever signals, waits for and reaps the processes it started itself (never anything found by name).
///
/// stdout and stderr can be pipes, read without threads: ``wait(timeout:killGraceSeconds:sampleThreads:)``
/// polls them while it waits, so a chatty child never blocks on a full pipe. Not thread-safe: one owner.
final class ChildProcess {
    /// Where the child's stdin comes from.
    enum Input {
        /// `/dev/null`: the child sees end of input at once.
        case null
        /// A pipe the runner keeps open; closing it (or the runner dying) gives the child end of input.
        case pipe
    }

    /// Where one of the child's output streams goes.
    enum Output {
        /// `/dev/null`.
        case null
        /// A pipe the runner reads.
        case pipe
        /// A file (created or truncated).
        case file(String)
    }

    /// A spawn that failed before the program ran.
    struct SpawnError: Error, CustomStringConvertible {
        /// What failed, with `strerror`'s text.
        var description: String
    }

    /// The child's process ID (and, when started in a process group of its own, the group's ID).
    let pid: pid_t
    /// The program's path.
    let executable: String
    /// Whether the child leads a process group of its own (then SIGKILL goes to the whole group).
    let leadsProcessGroup: Bool

    private var standardInputWriter: Int32
    private var readers: [StreamReader]
    private var outcome: ProcessOutcome?
    private let started = ContinuousClock.now
    private var threadsPeak = 0
    private var peakRSSKiB: Int64 = 0

    /// One pipe being drained.
    private struct StreamReader {
        /// The runner's read end; -1 once the stream has ended and the descriptor is closed.
        var descriptor: Int32
        var isStandardOutput: Bool
        var bytes: [UInt8] = []
    }

    /// Starts `executable` (a path, not looked up in `PATH`) with `arguments` (without the program name)
    /// and the runner's environment plus `environment`.
    ///
    /// - Parameter newProcessGroup: Start the child in a process group of its own, for programs that
    ///   fork workers (nginx): a final SIGKILL then reaches every process of that group, and a Ctrl-C on
    ///   the terminal does not (the runner stops it itself).
    /// - Throws: ``SpawnError`` when the pipes cannot be made or the program cannot be started.
    static func spawn(
        executable: String,
        arguments: [String],
        environment: [String: String] = [:],
        standardInput: Input = .null,
        standardOutput: Output = .pipe,
        standardError: Output = .pipe,
        newProcessGroup: Bool = false
    ) throws -> ChildProcess {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        var parentEnds: [Int32] = []  // closed on failure
        var childEnds: [Int32] = []  // closed in the parent after the spawn

        func cleanUp() {
            for descriptor in parentEnds + childEnds { close(descriptor) }
        }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var descriptors: [Int32] = [-1, -1]
            // Close-on-exec, so no other child inherits the runner's ends (pipe2 is not visible to Swift;
            // spawns happen on one thread, so nothing can fork between the two calls).
            guard pipe(&descriptors) == 0,
                  fcntl(descriptors[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(descriptors[1], F_SETFD, FD_CLOEXEC) == 0
            else {
                let reason = String(cString: strerror(errno))
                cleanUp()
                throw SpawnError(description: "pipe: \(reason)")
            }
            return (descriptors[0], descriptors[1])
        }

        var stdinWriter: Int32 = -1
        switch standardInput {
        case .null:
            posix_spawn_file_actions_addopen(&fileActions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        case .pipe:
            let ends = try makePipe()
            parentEnds.append(ends.write)
            childEnds.append(ends.read)
            stdinWriter = ends.write
            posix_spawn_file_actions_adddup2(&fileActions, ends.read, STDIN_FILENO)
        }

        var readers: [StreamReader] = []
        for (output, target, isStandardOutput) in [
            (standardOutput, STDOUT_FILENO, true), (standardError, STDERR_FILENO, false),
        ] {
            switch output {
            case .null:
                posix_spawn_file_actions_addopen(&fileActions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&fileActions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe:
                let ends = try makePipe()
                parentEnds.append(ends.read)
                childEnds.append(ends.write)
                _ = fcntl(ends.read, F_SETFL, fcntl(ends.read, F_GETFL) | O_NONBLOCK)
                readers.append(StreamReader(descriptor: ends.read, isStandardOutput: isStandardOutput))
                posix_spawn_file_actions_adddup2(&fileActions, ends.write, target)
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The runner ignores SIGPIPE and handles SIGINT/SIGTERM itself; its children start with defaults.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var variables = environment.map { "\($0.key)=\($0.value)" }
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if environment[name] == nil { variables.append(text) }
            index += 1
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }

        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &fileActions, &attributes, argv, envp)
        guard status == 0 else {
            cleanUp()
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        for descriptor in childEnds { close(descriptor) }
        SpawnedProcesses.shared.register(pid: pid, processGroup: newProcessGroup)
        return ChildProcess(
            pid: pid, executable: executable, leadsProcessGroup: newProcessGroup,
            standardInputWriter: stdinWriter, readers: readers
        )
    }

    private init(
        pid: pid_t, executable: String, leadsProcessGroup: Bool, standardInputWriter: Int32,
        readers: [StreamReader]
    ) {
        self.pid = pid
        self.executable = executable
        self.leadsProcessGroup = leadsProcessGroup
        self.standardInputWriter = standardInputWriter
        self.readers = readers
    }

    deinit {
        // An owner that forgot to wait: do not leave the process running or unreaped.
        if self.outcome == nil { _ = self.terminate(graceSeconds: 1) }
        self.closeStandardInput()
        for reader in self.readers where reader.descriptor >= 0 { close(reader.descriptor) }
    }

    /// Whether the process has exited (it is reaped if so).
    var hasExited: Bool { self.reapIfExited() }

    /// Waits up to `seconds` for the process to exit, without signalling it (reading its pipes meanwhile);
    /// returns whether it has exited.
    func hasExited(within seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(double: seconds)
        while !self.reapIfExited() {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return false }
            self.pump(timeoutMilliseconds: Int32(min(25, max(1, remaining.seconds * 1000))))
        }
        return true
    }

    /// What stdout held so far (all of it once the process has been waited for).
    var standardOutputSoFar: [UInt8] {
        if let outcome { return outcome.standardOutput }
        return self.readers.first(where: \.isStandardOutput)?.bytes ?? []
    }

    /// Closes the runner's end of the child's stdin pipe (the child sees end of input).
    func closeStandardInput() {
        if self.standardInputWriter >= 0 {
            close(self.standardInputWriter)
            self.standardInputWriter = -1
        }
    }

    /// Waits until stdout holds a complete line that satisfies `predicate`, the process exits, or
    /// `timeoutSeconds` pass; returns that line, or nil.
    func waitForLine(timeoutSeconds: Double, where predicate: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + .seconds(double: timeoutSeconds)
        while true {
            let text = String(decoding: self.standardOutputSoFar, as: UTF8.self)
            // The last piece is an unfinished line (or empty after a final newline).
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = lines.map(String.init).first(where: predicate) {
                return line
            }
            if self.reapIfExited() || ContinuousClock.now >= deadline { return nil }
            self.pump(timeoutMilliseconds: 20)
        }
    }

    /// Waits for the process to exit on its own, for at most `timeoutSeconds` (nil: no limit); past it,
    /// sends SIGTERM, then SIGKILL after `killGraceSeconds`. Reads the output pipes meanwhile and, with
    /// `sampleThreads`, reads the process's thread count and peak RSS (`VmHWM`) every 10 ms.
    func wait(timeoutSeconds: Double?, killGraceSeconds: Double = 2, sampleThreads: Bool = false) -> ProcessOutcome {
        if let outcome { return outcome }
        let deadline = timeoutSeconds.map { ContinuousClock.now + .seconds(double: $0) }
        var killDeadline: ContinuousClock.Instant?
        var timedOut = false
        while true {
            if self.reapIfExited(timedOut: timedOut), let outcome { return outcome }
            let now = ContinuousClock.now
            if let deadline, now >= deadline, !timedOut {
                timedOut = true
                self.signal(SIGTERM)
                killDeadline = now + .seconds(double: killGraceSeconds)
            }
            if let killDeadline, now >= killDeadline {
                self.signal(SIGKILL)
            }
            if sampleThreads {
                self.threadsPeak = max(self.threadsPeak, ProcessSampler.threads(of: self.pid))
                self.peakRSSKiB = max(self.peakRSSKiB, ProcessSampler.peakRSSKiB(of: self.pid))
            }
            self.pump(timeoutMilliseconds: sampleThreads ? 10 : 25)
        }
    }

    /// Stops the process: SIGTERM (and end of stdin), then SIGKILL (to its group, if it leads one) when it
    /// has not exited after `graceSeconds`. Returns how it ended.
    @discardableResult
    func terminate(graceSeconds: Double) -> ProcessOutcome {
        if let outcome { return outcome }
        self.closeStandardInput()
        self.signal(SIGTERM)
        var outcome = self.wait(timeoutSeconds: graceSeconds, killGraceSeconds: 0)
        outcome.timedOut = false  // asked to stop: not a time-out of its own
        return outcome
    }

    /// Sends `number` to the process, or to its whole group when it leads one (the group the runner
    /// created for it), unless already reaped.
    private func signal(_ number: Int32) {
        guard self.outcome == nil else { return }
        _ = kill(self.leadsProcessGroup ? -self.pid : self.pid, number)
    }

    /// Reaps the process if it has exited (draining its pipes first); returns whether it has.
    @discardableResult
    private func reapIfExited(timedOut: Bool = false) -> Bool {
        if self.outcome != nil { return true }
        if self.leadsProcessGroup {
            // Peek without reaping: while the leader is an unreaped zombie its group ID cannot be reused, so
            // killing the group reaches only workers it left behind, in the group the runner created.
            var info = siginfo_t()
            let peeked = waitid(P_PID, id_t(self.pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if peeked == 0 && info.si_signo == 0 { return false }
            if peeked == 0 { _ = kill(-self.pid, SIGKILL) }
        }
        var status: Int32 = 0
        var usage = rusage()
        let result = wait4(self.pid, &status, WNOHANG, &usage)
        guard result == self.pid || (result < 0 && errno == ECHILD) else { return false }
        // Whatever is still in the pipes (a grandchild may keep them open: read what is there, no more).
        self.pump(timeoutMilliseconds: 0)
        SpawnedProcesses.shared.unregister(pid: self.pid)
        let termination: ProcessOutcome.Termination
        if result < 0 {
            termination = .exited(-1)
        } else if status & 0x7f == 0 {
            termination = .exited((status >> 8) & 0xff)
        } else {
            termination = .signaled(status & 0x7f)
        }
        var standardOutput: [UInt8] = []
        var standardError: [UInt8] = []
        for reader in self.readers {
            if reader.isStandardOutput { standardOutput = reader.bytes } else { standardError = reader.bytes }
            if reader.descriptor >= 0 { close(reader.descriptor) }
        }
        self.readers = []
        self.closeStandardInput()
        self.outcome = ProcessOutcome(
            termination: termination, timedOut: timedOut, standardOutput: standardOutput,
            standardError: standardError, usage: result < 0 ? .zero : ChildResourceUsage(usage, peakRSSKiB: self.peakRSSKiB),
            threadsPeak: self.threadsPeak, wallSeconds: (ContinuousClock.now - self.started).seconds
        )
        return true
    }

    /// Waits up to `timeoutMilliseconds` for output on the open pipes and reads what is there.
    private func pump(timeoutMilliseconds: Int32) {
        let open = self.readers.indices.filter { self.readers[$0].descriptor >= 0 }
        guard !open.isEmpty else {
            if timeoutMilliseconds > 0 { usleep(UInt32(timeoutMilliseconds) * 1000) }
            return
        }
        var descriptors = open.map { pollfd(fd: self.readers[$0].descriptor, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        guard ready > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for (slot, index) in open.enumerated() where descriptors[slot].revents != 0 {
            let descriptor = self.readers[index].descriptor
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count > 0 {
                    self.readers[index].bytes.append(contentsOf: buffer[0..<count])
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                    // End of stream: keep what was read, stop polling it.
                    close(descriptor)
                    self.readers[index].descriptor = -1
                }
                break
            }
        }
    }
}
