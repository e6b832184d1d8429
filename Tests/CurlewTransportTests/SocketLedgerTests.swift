import Testing
@testable import CurlewTransport

/// Opens `socket` in `ledger` and returns the copy curl gets.
private func open(_ ledger: inout SocketLedger, _ socket: Int32) throws -> Int32 {
    let opened = ledger.opened(socket)
    return try #require(opened.forCurl)
}

@Suite("Socket ledger")
struct SocketLedgerTests {
    @Test("a connection's life: watched through the original, parked, closed by curl")
    func connectionLife() throws {
        let fake = FakeDescriptors()
        var ledger = SocketLedger(system: fake.system)
        let original = fake.socket()
        let (forCurl, stale) = ledger.opened(original)
        let curl = try #require(forCurl)
        #expect(curl != original && stale == nil)
        #expect(ledger.connectionCount == 1 && ledger.hasUnannounced)

        let got1 = ledger.curlWants(curl, interest: .write)
        #expect(got1 == .setInterest(.write, socket: original))
        #expect(!ledger.hasUnannounced)
        #expect(ledger.curlDescriptor(forWatched: original) == curl)
        let got2 = ledger.curlWants(curl, interest: .read)
        #expect(got2 == .setInterest(.read, socket: original))
        // Back to curl's pool: disarmed, still watched and mapped.
        let got3 = ledger.curlWants(curl, interest: nil)
        #expect(got3 == .setInterest([], socket: original))
        #expect(ledger.curlDescriptor(forWatched: original) == curl)

        let got4 = ledger.curlCloses(curl)
        #expect(got4 == .close(original))
        #expect(!fake.isOpen(curl), "curl's copy is closed at once")
        #expect(fake.isOpen(original), "the original is the scheduler's to close")
        #expect(ledger.curlDescriptor(forWatched: original) == nil)
        #expect(ledger.connectionCount == 0)
    }

    /// curl PR #11439: libcurl 7.88–8.1 closes a socket whose connect never completed with a plain
    /// `close()`, then says `CURL_POLL_REMOVE`.
    @Test("curl closes its copy behind the engine's back, then asks to stop watching it")
    func closedBehindTheBack() throws {
        let fake = FakeDescriptors()
        var ledger = SocketLedger(system: fake.system)
        let original = fake.socket()
        let curl = try open(&ledger, original)
        _ = ledger.curlWants(curl, interest: .write)
        fake.closeBehindTheBack(curl)
        let got5 = ledger.curlWants(curl, interest: nil)
        #expect(got5 == .close(original))
        #expect(ledger.connectionCount == 0)
        let got6 = ledger.curlWants(curl, interest: nil)
        #expect(got6 == nil, "nothing is left to release")
    }

    @Test("a socket curl closed before announcing it is released by the sweep")
    func unannouncedSweep() throws {
        let fake = FakeDescriptors()
        var ledger = SocketLedger(system: fake.system)
        let refused = fake.socket()
        let curl = try open(&ledger, refused)
        let kept = fake.socket()
        let keptForCurl = try open(&ledger, kept)
        let got7 = ledger.sweepUnannounced()
        #expect(got7.isEmpty, "both copies are still open")
        fake.closeBehindTheBack(curl)
        let got8 = ledger.sweepUnannounced()
        #expect(got8 == [.close(refused)])
        #expect(ledger.hasUnannounced, "the other one is still unannounced")
        let got9 = ledger.curlWants(keptForCurl, interest: .read)
        #expect(got9 == .setInterest(.read, socket: kept))
        #expect(!ledger.hasUnannounced)
    }

    /// The number of a copy curl closed behind the engine's back comes back for the next socket:
    /// the old record is released then, and the new socket is not mistaken for the old one.
    @Test("a descriptor number reused for a new connection")
    func numberReuse() throws {
        let fake = FakeDescriptors()
        var ledger = SocketLedger(system: fake.system)
        let first = fake.socket()
        let curl = try open(&ledger, first)
        _ = ledger.curlWants(curl, interest: .write)
        let second = fake.socket()  // made before curl's copy is closed, so that number is the next free one
        fake.closeBehindTheBack(curl)

        let (reused, stale) = ledger.opened(second)
        #expect(reused == curl, "the kernel hands out the lowest free number again")
        #expect(stale == .close(first), "the first connection's original is released")
        #expect(ledger.connectionCount == 1)
        #expect(ledger.curlDescriptor(forWatched: first) == nil)
        #expect(ledger.curlDescriptor(forWatched: second) == curl)
        // The copy under the old number is the new socket's: a remove parks it, it is not gone.
        _ = ledger.curlWants(curl, interest: .read)
        let got10 = ledger.curlWants(curl, interest: nil)
        #expect(got10 == .setInterest([], socket: second))
    }

    @Test("a socket curl made itself is watched through a duplicate")
    func foreignSocket() throws {
        let fake = FakeDescriptors()
        var ledger = SocketLedger(system: fake.system)
        let resolver = fake.socket()
        let watched = ledger.curlWants(resolver, interest: .read)
        let command = try #require(watched)
        guard case .setInterest(.read, let duplicate) = command else {
            Issue.record("expected a watch, got \(command)")
            return
        }
        #expect(duplicate != resolver)
        #expect(ledger.curlDescriptor(forWatched: duplicate) == resolver)
        #expect(ledger.foreignWatchCount == 1)
        let got11 = ledger.curlWants(resolver, interest: [.read, .write])
        #expect(got11 == .setInterest([.read, .write], socket: duplicate))
        let got12 = ledger.curlWants(resolver, interest: nil)
        #expect(got12 == .close(duplicate))
        #expect(ledger.foreignWatchCount == 0 && ledger.curlDescriptor(forWatched: duplicate) == nil)
    }

    @Test("at shutdown everything still held is released")
    func releaseAll() throws {
        let fake = FakeDescriptors()
        var ledger = SocketLedger(system: fake.system)
        let a = fake.socket(), b = fake.socket(), resolver = fake.socket()
        let curlA = try open(&ledger, a)
        _ = try open(&ledger, b)
        _ = ledger.curlWants(curlA, interest: .read)
        guard case .setInterest(_, let duplicate)? = ledger.curlWants(resolver, interest: .read) else {
            Issue.record("the resolver's socket was not watched")
            return
        }
        let got13 = ledger.releaseAll()
        #expect(Set(got13) == [.close(a), .close(b), .close(duplicate)])
        #expect(ledger.connectionCount == 0 && ledger.foreignWatchCount == 0)
        let got14 = ledger.releaseAll()
        #expect(got14.isEmpty)
    }

    @Test("no duplicate, no socket: curl gets CURL_SOCKET_BAD and nothing is kept")
    func duplicateFails() {
        var closed: [Int32] = []
        var ledger = SocketLedger(system: SocketLedger.System(
            inode: { _ in 1 }, duplicate: { _ in nil }, close: { closed.append($0) }))
        let (forCurl, command) = ledger.opened(7)
        #expect(forCurl == nil && command == nil)
        #expect(closed == [7])
        #expect(ledger.connectionCount == 0)
    }
}

@Suite("Socket ledger: parking a connected socket")
struct SocketLedgerParkingTests {
    /// A connection curl has read from is closed through the close callback, so parking it (once per
    /// request on a kept-alive connection) needs no `fstat`.
    @Test("a connected socket is parked without a system call")
    func parkingCostsNothing() throws {
        let inodeCalls = Locked(0)
        var inodes: [Int32: UInt] = [10: 1, 11: 1]
        var ledger = SocketLedger(system: SocketLedger.System(
            inode: { descriptor in inodeCalls.withLock { $0 += 1 }; return inodes[descriptor] },
            duplicate: { _ in 11 }, close: { inodes[$0] = nil }))
        let opened = ledger.opened(10)
        let curl = try #require(opened.forCurl)
        let callsAfterOpen = inodeCalls.value
        _ = ledger.curlWants(curl, interest: .write)
        let beforeRead = ledger.curlWants(curl, interest: nil)
        #expect(beforeRead == .setInterest([], socket: 10))
        #expect(inodeCalls.value == callsAfterOpen + 1, "not connected yet: checked")
        _ = ledger.curlWants(curl, interest: .read)
        for _ in 0..<3 {
            let parked = ledger.curlWants(curl, interest: nil)
            #expect(parked == .setInterest([], socket: 10))
            _ = ledger.curlWants(curl, interest: [.read, .write])
        }
        #expect(inodeCalls.value == callsAfterOpen + 1, "connected: parked without a check")
    }
}
