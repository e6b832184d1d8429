import Testing
@testable import CurlewTransport

@Suite("Engine core: slots, multi handles and sockets")
struct EngineCoreSlotTests {
    private let a = ConnectionAdmission.Host(scheme: "http", authority: "a.test")
    private let secure = ConnectionAdmission.Host(scheme: "https", authority: "s.test")

    private func core(perHost: Int, streams: Int = 100,
                      _ configure: (inout TransferEngine.Configuration) -> Void = { _ in }) -> EngineCore {
        EngineCore.testing { configuration in
            configuration.maximumConnectionsPerHost = perHost
            configuration.maximumStreamsPerConnection = streams
            configure(&configuration)
        }
    }

    @Test("slots up to the per-host limit; each slot given back goes to the next in line, and they start together")
    func grantsStartTogether() {
        var core = self.core(perHost: 2)
        let got1 = core.transferWantsSlot(1, on: self.a, multiplexes: false)
        #expect(got1)
        let got2 = core.transferWantsSlot(2, on: self.a, multiplexes: false)
        #expect(got2)
        for id in 3...5 as ClosedRange<UInt64> {
            let got3 = core.transferWantsSlot(id, on: self.a, multiplexes: false)
            #expect(!got3)
        }
        #expect(core.waitingTransfers == 3)

        let got4 = core.transferLeft(1, slot: .holding(self.a))
        #expect(got4 == .grant(3, performAfterEvents: true))
        let got5 = core.transferLeft(2, slot: .holding(self.a))
        #expect(got5 == .grant(4, performAfterEvents: false), "same batch")
        var queued = core.takeWorkAfterEvents()
        #expect(queued.count == 1)
        guard case .grantedStarts = queued.first else {
            Issue.record("expected the granted starts, got \(queued)")
            return
        }
        core.workAfterEventsRan(&queued)
        var granted = core.takeGranted()
        #expect(granted == [3, 4], "oldest first")
        core.grantedStarted(&granted)
        let got6 = core.heldSlots(for: self.a)
        #expect(got6 == 2, "a slot passes straight to the next in line")

        let got7 = core.transferLeft(3, slot: .holding(self.a))
        #expect(got7 == .grant(5, performAfterEvents: true), "a new batch")
        let got8 = core.transferLeft(4, slot: .holding(self.a))
        #expect(got8 == .none, "nobody waits: the slot is free")
        let got9 = core.heldSlots(for: self.a)
        #expect(got9 == 1)
    }

    @Test("a transfer that leaves the queue is never granted a slot")
    func withdrawnTransfersAreSkipped() {
        var core = self.core(perHost: 1, streams: 1)
        let got10 = core.transferWantsSlot(1, on: self.a, multiplexes: false)
        #expect(got10)
        let got11 = core.transferWantsSlot(2, on: self.a, multiplexes: true)
        #expect(!got11)
        let got12 = core.transferWantsSlot(3, on: self.a, multiplexes: false)
        #expect(!got12)
        let got13 = core.transferLeft(2, slot: .waiting(self.a))
        #expect(got13 == .none)
        let got14 = core.transferLeft(1, slot: .holding(self.a))
        #expect(got14 == .grant(3, performAfterEvents: true))
        let got15 = core.transferLeft(9, slot: .none)
        #expect(got15 == .none)
        #expect(core.waitingTransfers == 0)
    }

    @Test("HTTPS takes many transfers per slot until its host answers in HTTP/1.1; then the slots drain to the limit first")
    func hostsThatAnswerHTTP1() {
        var core = self.core(perHost: 2, streams: 3)
        for id in 1...6 as ClosedRange<UInt64> {
            let got16 = core.transferWantsSlot(id, on: self.secure, multiplexes: true)
            #expect(got16, "3 streams × 2 connections")
        }
        let got17 = core.transferWantsSlot(7, on: self.secure, multiplexes: true)
        #expect(!got17)
        let got18 = core.transferWantsSlot(8, on: self.secure, multiplexes: true)
        #expect(!got18)

        core.host(self.secure, answeredIn: .http1_1)
        // 6 held; the waiting transfers may have one only once no more than 2 are held.
        for id in 1...4 as ClosedRange<UInt64> {
            let got19 = core.transferLeft(id, slot: .holding(self.secure))
            #expect(got19 == .none, "held \(7 - id) > 2")
        }
        let got20 = core.heldSlots(for: self.secure)
        #expect(got20 == 2)
        let got21 = core.transferLeft(5, slot: .holding(self.secure))
        #expect(got21 == .grant(7, performAfterEvents: true))
        let got22 = core.transferWantsSlot(9, on: self.secure, multiplexes: true)
        #expect(!got22, "one per slot now")

        core.host(self.secure, answeredIn: .http2)
        let got23 = core.transferLeft(6, slot: .holding(self.secure))
        #expect(got23 == .grant(8, performAfterEvents: false))
        let got24 = core.transferLeft(7, slot: .holding(self.secure))
        #expect(got24 == .grant(9, performAfterEvents: false))
        let got25 = core.transferWantsSlot(10, on: self.secure, multiplexes: true)
        #expect(got25, "shared again after an HTTP/2 answer")
    }

    @Test("a transfer that cannot multiplex, or an engine without multiplexing, counts one per slot")
    func oneTransferPerSlot() {
        var plain = self.core(perHost: 1, streams: 100)
        let got26 = plain.transferWantsSlot(1, on: self.secure, multiplexes: false)
        #expect(got26)
        let got27 = plain.transferWantsSlot(2, on: self.secure, multiplexes: false)
        #expect(!got27)
        var off = self.core(perHost: 1, streams: 100) { $0.http2Multiplexing = false }
        let got28 = off.transferWantsSlot(1, on: self.secure, multiplexes: true)
        #expect(got28)
        let got29 = off.transferWantsSlot(2, on: self.secure, multiplexes: true)
        #expect(!got29)
        var unlimited = self.core(perHost: 0)
        for id in 1...50 as ClosedRange<UInt64> {
            let got30 = unlimited.transferWantsSlot(id, on: self.a, multiplexes: false)
            #expect(got30)
        }
    }

    @Test("one multi handle until it is full; transfers that may multiplex stay in the first; a finished one leaves a hint")
    func placement() {
        var core = self.core(perHost: 0) {
            $0.transfersPerMultiHandle = 2
            $0.maximumMultiHandles = 3
        }
        let got31 = core.placeTransfer(to: self.a, multiplexes: false)
        #expect(got31 == 0)
        let got32 = core.placeTransfer(to: self.a, multiplexes: false)
        #expect(got32 == 0)
        #expect(core.multiHandleCount == 1)
        let got33 = core.placeTransfer(to: self.a, multiplexes: false)
        #expect(got33 == 1, "a new handle, for the driver to open")
        #expect(core.multiHandleCount == 2)
        let got34 = core.placeTransfer(to: self.secure, multiplexes: true)
        #expect(got34 == 0, "pinned to the first")
        core.transferDetached(from: 1, host: self.a, finished: true)
        core.transferDetached(from: 0, host: self.a, finished: false)
        let got35 = core.placeTransfer(to: self.a, multiplexes: false)
        #expect(got35 == 1, "where its idle connection is")
        let got36 = core.placeTransfer(to: self.a, multiplexes: false)
        #expect(got36 == 1, "the least busy, while it has room")
        let got37 = core.placeTransfer(to: self.a, multiplexes: false)
        #expect(got37 == 2, "both full: a third")
        core.multiHandleNotOpened()
        #expect(core.multiHandleCount == 2, "the handle that could not be made is forgotten")

        var capped = self.core(perHost: 0) {
            $0.transfersPerMultiHandle = 1
            $0.maximumConnections = 10
        }
        for _ in 0..<5 {
            let got38 = capped.placeTransfer(to: self.a, multiplexes: false)
            #expect(got38 == 0, "a total limit: one handle")
        }
    }

    @Test("readiness goes to curl's descriptor on the multi handle that announced it")
    func sockets() throws {
        let descriptors = FakeDescriptors()
        var core = EngineCore.testing(descriptors) {
            $0.transfersPerMultiHandle = 1
            $0.maximumMultiHandles = 2
        }
        let original = descriptors.socket()
        let (forCurl, stale) = core.curlOpened(original)
        let curl = try #require(forCurl)
        #expect(stale == .none && curl != original)
        let got39 = core.curlWantsSocket(curl, interest: .write, handle: 0)
        #expect(got39 == .setInterest(.write, socket: original))
        let got40 = core.socketReady(original, events: [.write, .error])
        #expect(got40
            == .socketAction(handle: 0, socket: curl, events: [.write, .error]))

        _ = core.placeTransfer(to: self.a, multiplexes: false)
        _ = core.placeTransfer(to: self.a, multiplexes: false)  // a second handle opens
        let second = descriptors.socket()
        let curl2 = try #require(core.curlOpened(second).forCurl)
        let got41 = core.curlWantsSocket(curl2, interest: .read, handle: 1)
        #expect(got41 == .setInterest(.read, socket: second))
        let got42 = core.socketReady(second, events: .read)
        #expect(got42 == .socketAction(handle: 1, socket: curl2, events: .read))
        let got43 = core.socketReady(original, events: .read)
        #expect(got43 == .socketAction(handle: 0, socket: curl, events: .read))

        let got44 = core.curlWantsSocket(curl, interest: nil, handle: 0)
        #expect(got44 == .setInterest([], socket: original),
                "back to curl's pool: disarmed, still watched")
        let got45 = core.curlCloses(curl)
        #expect(got45 == .close(original))
        let got46 = core.socketReady(original, events: .read)
        #expect(got46 == .none, "gone")
        let got47 = core.sweepUnannouncedSockets()
        #expect(got47.isEmpty)
        let diagnostics = core.diagnostics(liveTransfers: 0, idleEasyHandles: 0, scheduler: SchedulerDiagnostics())
        #expect(diagnostics.openSockets == 1 && diagnostics.multiHandles == 2 && diagnostics.socketActions == 3)
        let got48 = core.releaseAllSockets()
        #expect(got48 == [.close(second)])
    }

    @Test("a socket curl closed before announcing it is closed by the sweep after the socket action")
    func sweep() throws {
        let descriptors = FakeDescriptors()
        var core = EngineCore.testing(descriptors)
        let original = descriptors.socket()
        let curl = try #require(core.curlOpened(original).forCurl)
        descriptors.closeBehindTheBack(curl)  // a connect refused at once (curl PR #11439)
        let got49 = core.sweepUnannouncedSockets()
        #expect(got49 == [.close(original)])
        let got50 = core.sweepUnannouncedSockets()
        #expect(got50.isEmpty)
    }
}
