#if canImport(Glibc)
import Glibc
#endif

/// Which connection sockets the engine owns, and by which descriptor curl knows each one: the
/// bookkeeping behind the engine's socket ownership (``EngineCore``), as a value whose system calls are injected
/// (``System``), so that it is tested without descriptors.
///
/// **Why duplicates.** Every socket curl opens for a connection comes from the engine's
/// `CURLOPT_OPENSOCKETFUNCTION`, and the scheduler, not curl, closes the descriptor it watches —
/// after that watch can no longer deliver events. The engine hands curl a *duplicate* of each
/// connection socket and watches the original: libcurl 7.88 to 8.1 closes a socket whose connect
/// never completed (connect timeout, refusal, cancel while connecting) with a plain `close()`,
/// bypassing `CURLOPT_CLOSESOCKETFUNCTION`, and only then says `CURL_POLL_REMOVE` (curl PR #11439).
/// With the duplicate, such a close cannot pull the descriptor out from under a watch or let its
/// number be reused while watched; the ledger notices it (curl's copy is gone, or its number now
/// names another socket) when curl says `CURL_POLL_REMOVE`, in a sweep of sockets curl never
/// announced, or when curl's number comes back for a new socket, and has the original closed. The
/// price is one descriptor more per connection.
///
/// Sockets curl creates otherwise (the threaded resolver's socketpair) are *foreign*: curl closes
/// them right after it asks to stop watching them, so they are watched through a duplicate too.
///
/// Every method answers with what the scheduler must do (``Command``); the hot paths return at
/// most one command and allocate nothing.
struct SocketLedger {
    /// What the driver must ask of its scheduler.
    enum Command: Hashable {
        /// Watch `socket` (a descriptor of the engine's, never curl's) for exactly `interest`.
        case setInterest(SocketInterest, socket: Int32)
        /// Stop watching `socket` and close it once no event for it can be delivered.
        case close(Int32)
    }

    /// The system calls the ledger makes.
    struct System {
        /// The inode of the socket that `descriptor` names, or `nil` if it is closed.
        var inode: (Int32) -> UInt?
        /// A new close-on-exec descriptor for the same socket, or `nil`.
        var duplicate: (Int32) -> Int32?
        /// Closes a descriptor that no watch refers to.
        var close: (Int32) -> Void

        /// The real calls: `fstat`, `fcntl(F_DUPFD_CLOEXEC)`, `close`.
        static var live: System {
            System(
                inode: { descriptor in
                    var info = stat()
                    return fstat(descriptor, &info) == 0 ? UInt(info.st_ino) : nil
                },
                duplicate: { descriptor in
                    let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
                    return copy >= 0 ? copy : nil
                },
                close: { descriptor in _ = Glibc.close(descriptor) }
            )
        }
    }

    /// A connection socket: the original the scheduler watches, and what identifies it.
    private struct Connection {
        /// The descriptor the scheduler watches and eventually closes; curl has a duplicate.
        let watched: Int32
        /// The socket's inode, to recognise curl's duplicate (or see that its number is now another socket).
        let inode: UInt
        /// Whether curl has announced it (its first socket-callback call); only then is it watched.
        var isWatched = false
        /// Whether curl has waited to read from it: then its connect completed, and curl closes it
        /// through `CURLOPT_CLOSESOCKETFUNCTION` (only a socket whose connect never completed is
        /// closed behind the engine's back), so parking it needs no check that it is still there.
        var hasConnected = false
    }

    private let system: System
    /// Connection sockets, indexed by curl's descriptor.
    private var connections: [Connection?] = []
    /// How many connection sockets the engine holds.
    private(set) var connectionCount = 0
    /// curl's descriptors of connection sockets not yet announced to the socket callback.
    private var unannounced: Set<Int32> = []
    /// Sockets curl opened without the engine: curl's descriptor → the duplicate that is watched.
    private var duplicateByForeign: [Int32: Int32] = [:]
    /// For every watched descriptor, curl's descriptor of the same socket (-1: none).
    private var curlDescriptorByWatched: [Int32] = []

    init(system: System = .live) {
        self.system = system
    }

    /// How many foreign sockets are watched through a duplicate.
    var foreignWatchCount: Int { self.duplicateByForeign.count }

    /// Whether some connection socket has not been announced by curl yet (see ``sweepUnannounced()``).
    var hasUnannounced: Bool { !self.unannounced.isEmpty }

    /// curl's descriptor for an event on the watched descriptor `watched`, or `nil` when it no
    /// longer belongs to curl.
    func curlDescriptor(forWatched watched: Int32) -> Int32? {
        guard watched >= 0, Int(watched) < self.curlDescriptorByWatched.count else { return nil }
        let curl = self.curlDescriptorByWatched[Int(watched)]
        return curl >= 0 ? curl : nil
    }

    // MARK: curl's callbacks

    /// `CURLOPT_OPENSOCKETFUNCTION`: the engine created `socket` for curl. Keeps it and returns the
    /// duplicate to hand to curl, or `nil` (both closed) when no duplicate could be made. A record
    /// still held under the duplicate's number means curl closed that socket behind the engine's
    /// back before now: its original is released.
    mutating func opened(_ socket: Int32) -> (forCurl: Int32?, command: Command?) {
        guard let forCurl = self.system.duplicate(socket) else {
            self.system.close(socket)
            return (nil, nil)
        }
        guard let inode = self.system.inode(socket) else {
            self.system.close(socket)
            self.system.close(forCurl)
            return (nil, nil)
        }
        let stale = self.release(forCurl)
        if Int(forCurl) >= self.connections.count {
            self.connections.append(contentsOf: repeatElement(nil, count: Int(forCurl) + 64 - self.connections.count))
        }
        self.connections[Int(forCurl)] = Connection(watched: socket, inode: inode)
        self.connectionCount += 1
        self.map(socket, to: forCurl)
        self.unannounced.insert(forCurl)
        return (forCurl, stale)
    }

    /// `CURLMOPT_SOCKETFUNCTION`: curl wants `socket` watched for `interest`, or, with `nil`
    /// (`CURL_POLL_REMOVE`), no longer watched. A connection going back to curl's pool is disarmed
    /// but stays watched; one whose copy curl closed is released.
    mutating func curlWants(_ socket: Int32, interest: SocketInterest?) -> Command? {
        if var connection = self.connection(socket) {
            guard let interest else {
                if !connection.hasConnected, self.isGone(connection, as: socket) { return self.release(socket) }
                return connection.isWatched ? .setInterest([], socket: connection.watched) : nil
            }
            if !connection.isWatched || (interest.contains(.read) && !connection.hasConnected) {
                if !connection.isWatched { self.unannounced.remove(socket) }
                connection.isWatched = true
                connection.hasConnected = connection.hasConnected || interest.contains(.read)
                self.connections[Int(socket)] = connection
            }
            return .setInterest(interest, socket: connection.watched)
        }

        guard let interest else {
            guard let duplicate = self.duplicateByForeign.removeValue(forKey: socket) else { return nil }
            self.unmap(duplicate)
            return .close(duplicate)
        }
        if let existing = self.duplicateByForeign[socket] {
            return .setInterest(interest, socket: existing)
        }
        // Without a duplicate the socket goes unwatched; curl's timer still drives it.
        guard let duplicate = self.system.duplicate(socket) else { return nil }
        self.duplicateByForeign[socket] = duplicate
        self.map(duplicate, to: socket)
        return .setInterest(interest, socket: duplicate)
    }

    /// `CURLOPT_CLOSESOCKETFUNCTION`: curl is done with `socket`. curl's copy is closed at once (it
    /// is never watched); the original is released.
    mutating func curlCloses(_ socket: Int32) -> Command? {
        self.system.close(socket)
        return self.release(socket)
    }

    // MARK: Sweeps

    /// Releases the sockets curl closed before it ever announced them (a connect refused at once).
    mutating func sweepUnannounced() -> [Command] {
        var commands: [Command] = []
        for socket in self.unannounced {
            if let connection = self.connection(socket), self.isGone(connection, as: socket), let command = self.release(socket) {
                commands.append(command)
            }
        }
        return commands
    }

    /// Releases everything still held (at shutdown, after `curl_multi_cleanup`).
    mutating func releaseAll() -> [Command] {
        var commands: [Command] = []
        for socket in self.connections.indices where self.connections[socket] != nil {
            if let command = self.release(Int32(socket)) { commands.append(command) }
        }
        for duplicate in self.duplicateByForeign.values {
            self.unmap(duplicate)
            commands.append(.close(duplicate))
        }
        self.duplicateByForeign.removeAll()
        return commands
    }

    // MARK: Private

    /// Forgets the connection socket curl knows as `socket`; the original is to be closed.
    private mutating func release(_ socket: Int32) -> Command? {
        guard let connection = self.connection(socket) else { return nil }
        self.connections[Int(socket)] = nil
        self.connectionCount -= 1
        self.unannounced.remove(socket)
        self.unmap(connection.watched)
        return .close(connection.watched)
    }

    private func connection(_ socket: Int32) -> Connection? {
        socket >= 0 && Int(socket) < self.connections.count ? self.connections[Int(socket)] : nil
    }

    /// Whether curl's duplicate `socket` is closed, or its number now names another socket.
    private func isGone(_ connection: Connection, as socket: Int32) -> Bool {
        self.system.inode(socket) != connection.inode
    }

    /// Records that events for the watched descriptor go to curl as `curlSocket`.
    private mutating func map(_ watched: Int32, to curlSocket: Int32) {
        if Int(watched) >= self.curlDescriptorByWatched.count {
            self.curlDescriptorByWatched.append(
                contentsOf: repeatElement(-1, count: Int(watched) + 64 - self.curlDescriptorByWatched.count))
        }
        self.curlDescriptorByWatched[Int(watched)] = curlSocket
    }

    private mutating func unmap(_ watched: Int32) {
        if watched >= 0, Int(watched) < self.curlDescriptorByWatched.count { self.curlDescriptorByWatched[Int(watched)] = -1 }
    }
}
