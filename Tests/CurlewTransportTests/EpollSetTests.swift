import CurlewTestSupport
import Glibc
import Testing

@testable import CurlewTransport

/// `EpollSet` on a real socket pair, driven by hand on the test's thread: which events it delivers
/// and how many `epoll_ctl` calls parking and re-arming cost. (Every scheduler runs the behaviour
/// suite of `SchedulerConformanceTests` too; these checks pin down the system calls.)
@Suite("Epoll set: parking and re-arming")
struct EpollSetTests {
    /// What one zero-timeout drain delivers.
    private func drain(_ set: EpollSet) -> [(Int32, SocketEvents)] {
        var delivered: [(Int32, SocketEvents)] = []
        set.drain(maxBatches: 4) { delivered.append(($0, $1)) }
        return delivered
    }

    /// Whether the epoll descriptor itself is readable (what would wake the scheduler).
    private func setIsReady(_ set: EpollSet) -> Bool {
        var entry = pollfd(fd: set.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    @Test("a read watch parked and re-armed for reading, as a kept connection is per request, costs no epoll_ctl")
    func parkingAReadWatchIsFree() throws {
        let set = try #require(EpollSet.make())
        defer { set.closeAll() }
        let pair = try SocketPair()
        defer { pair.closePeer() }

        #expect(set.setInterest(.read, for: pair.local))
        #expect(set.controlCalls == 1)
        for _ in 0..<10 {
            #expect(set.setInterest([], for: pair.local))
            #expect(set.setInterest(.read, for: pair.local))
        }
        #expect(set.controlCalls == 1)
        #expect(set.isArmed(pair.local))

        // Re-armed, it still reports what arrives.
        try pair.sendFromPeer()
        let delivered = self.drain(set)
        #expect(delivered.count == 1)
        #expect(delivered.first?.0 == pair.local)
        #expect(delivered.first?.1 == .read)
    }

    @Test("a parked read watch whose peer sends delivers nothing and leaves the set on that event")
    func parkedReadWatchLeavesOnItsFirstEvent() throws {
        let set = try #require(EpollSet.make())
        defer { set.closeAll() }
        let pair = try SocketPair()
        defer { pair.closePeer() }

        #expect(set.setInterest(.read, for: pair.local))
        #expect(set.setInterest([], for: pair.local))
        #expect(!set.isArmed(pair.local))
        try pair.sendFromPeer()
        #expect(self.drain(set).isEmpty, "parked: nothing is delivered")
        #expect(!set.isInEpollSet(pair.local))
        #expect(set.controlCalls == 2, "one ADD, then one DEL on the parked socket's event")
        #expect(!self.setIsReady(set), "the unread byte no longer wakes the set")

        // Armed again: back in the set, and the byte still unread is reported (level-triggered).
        #expect(set.setInterest(.read, for: pair.local))
        #expect(set.controlCalls == 3)
        #expect(self.drain(set).map(\.1) == [.read])
    }

    @Test("a parked write watch is emptied at once: a writable socket must not keep waking the set")
    func parkedWriteWatchIsEmptied() throws {
        let set = try #require(EpollSet.make())
        defer { set.closeAll() }
        let pair = try SocketPair()
        defer { pair.closePeer() }

        #expect(set.setInterest(.write, for: pair.local))
        #expect(self.drain(set).map(\.1) == [.write])
        #expect(set.setInterest([], for: pair.local))
        #expect(set.controlCalls == 2, "one ADD, one MOD to no events")
        #expect(!self.setIsReady(set))
        #expect(self.drain(set).isEmpty)
        #expect(set.isInEpollSet(pair.local), "still registered: re-arming is one MOD")

        #expect(set.setInterest(.read, for: pair.local))
        #expect(set.controlCalls == 3)
        #expect(!self.setIsReady(set), "armed for reading only, a writable socket stays quiet")
    }

    @Test("closing a parked watch takes it out of the set and closes the descriptor")
    func closingAParkedWatch() throws {
        let set = try #require(EpollSet.make())
        defer { set.closeAll() }
        let pair = try SocketPair()
        defer { pair.closePeer() }

        #expect(set.setInterest(.read, for: pair.local))
        #expect(set.setInterest([], for: pair.local))
        set.close(socket: pair.local)
        #expect(set.controlCalls == 2, "one ADD, one DEL")
        #expect(set.watchedCount == 0)
        #expect(fcntl(pair.local, F_GETFD) == -1, "the descriptor is closed")
    }
}
