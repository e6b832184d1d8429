/// Which of the engine's curl multi handles takes the next transfer: a value with no I/O, tested on
/// its own. Part of ``EngineCore``, on the engine's context only.
///
/// **Why more than one multi handle.** libcurl 7.88 walks a host's whole connection list to find an
/// idle connection for each new transfer (`ConnectionExists`), and walks the whole connection cache
/// again when the transfer's handle leaves the multi handle (`curl_multi_remove_handle` looks for a
/// connect-only connection). Both walks touch every connection, busy or not, so their cost per
/// request grows with the number of connections: on a 2-CPU machine, small GETs from one host cost
/// the engine 27 µs of CPU each at 128 connections, 34 µs at 512 and 53 µs at 1,024. A multi handle
/// holds its own connection cache, so the engine spreads a large load over several, each with a
/// few hundred transfers, and the walks stay short.
///
/// **One until it is full.** Everything goes to the first multi handle while it holds fewer than
/// ``transfersPerHandle`` transfers, which is what an engine of one multi handle does: small loads
/// behave exactly as before. Beyond it the next handle opens, up to ``maximumHandles``.
///
/// **Not what may multiplex.** Transfers that may share an HTTP/2 connection all stay in the first
/// handle: the engine admits up to a hundred of them per connection slot, and only one multi handle
/// keeps their connections to a host within the per-host limit (curl counts it per handle).
///
/// **Back to the idle connection.** A connection can only be reused by a transfer of its own multi
/// handle. So the placement remembers, per host, how many transfers each handle finished lately —
/// each probably left an idle connection behind — and sends the next transfer to that host to the
/// first handle with one. Only without such a hint does it pick the least busy open handle, and then
/// no handle has an idle connection to that host that the placement knows of: curl would have
/// opened a connection for the transfer anyway. A hint can be wrong (the server closed the
/// connection): curl then opens one in that handle, and the hint is used up.
struct MultiHandlePlacement {
    /// How many transfers one multi handle takes before the next opens.
    let transfersPerHandle: Int
    /// The most multi handles.
    let maximumHandles: Int
    /// Transfers in each open multi handle; its count is the number of open handles.
    private(set) var attached: [Int] = [0]
    /// Per host, how many transfers each handle finished and that no transfer has followed yet.
    private var idle: [ConnectionAdmission.Host: [Int]] = [:]
    /// The most hosts with hints: an engine that meets ever new hosts (a crawler) forgets all its
    /// hints at this many rather than grow. Hints are only hints: forgetting costs a connection at most.
    static let maximumHintedHosts = 4_096

    init(transfersPerHandle: Int, maximumHandles: Int) {
        self.transfersPerHandle = max(1, transfersPerHandle)
        self.maximumHandles = max(1, maximumHandles)
    }

    /// How many multi handles are open.
    var handleCount: Int { self.attached.count }

    /// How many hosts have hints.
    var hintedHostCount: Int { self.idle.count }

    /// The handle for a transfer to `host`, counted as attached to it. An index equal to the number
    /// of handles open before the call means a new handle: the caller opens it. A `pinned` transfer
    /// always goes to the first handle (see ``EngineCore/placeTransfer(to:multiplexes:)``).
    mutating func place(_ host: ConnectionAdmission.Host, pinned: Bool = false) -> Int {
        if pinned || self.attached.count == 1 && (self.attached[0] < self.transfersPerHandle || self.maximumHandles == 1) {
            self.attached[0] += 1
            return 0
        }
        let index = self.takeIdleHint(for: host) ?? self.leastBusyOrNew()
        if index == self.attached.count { self.attached.append(0) }
        self.attached[index] += 1
        return index
    }

    /// A transfer to `host` left handle `index`; if it `finished` its response, its connection is
    /// probably idle there now. (A `nil` host: the transfer came while there was one handle.)
    mutating func left(_ index: Int, host: ConnectionAdmission.Host?, finished: Bool) {
        guard index < self.attached.count else { return }
        self.attached[index] = max(0, self.attached[index] - 1)
        // With one handle there is nothing to choose between: no bookkeeping.
        guard finished, self.attached.count > 1, let host else { return }
        if self.idle.count >= Self.maximumHintedHosts, self.idle[host] == nil {
            self.idle.removeAll(keepingCapacity: true)
        }
        self.idle[host, default: Array(repeating: 0, count: self.maximumHandles)][index] += 1
    }

    /// Forgets the handle the last ``place(_:)`` asked to open: it could not be made.
    mutating func abandonLastHandle() {
        guard self.attached.count > 1 else { return }
        self.attached.removeLast()
    }

    /// The first handle that probably holds an idle connection to `host`, its hint used up.
    private mutating func takeIdleHint(for host: ConnectionAdmission.Host) -> Int? {
        guard var counts = self.idle[host], let index = counts.firstIndex(where: { $0 > 0 }) else { return nil }
        counts[index] -= 1
        self.idle[host] = counts.allSatisfy { $0 == 0 } ? nil : counts
        return index
    }

    /// The open handle with the fewest transfers while it has room, else a new one if allowed, else
    /// the least busy.
    private func leastBusyOrNew() -> Int {
        var best = 0
        for index in self.attached.indices where self.attached[index] < self.attached[best] {
            best = index
        }
        if self.attached[best] >= self.transfersPerHandle, self.attached.count < self.maximumHandles {
            return self.attached.count
        }
        return best
    }
}
