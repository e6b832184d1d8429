@testable import CurlewDispatch
import CurlewTestSupport
import CurlewTransport
import Dispatch
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The `TransferScheduler` contract, checked on every backend with no curl and no HTTP: a probe event
// handler, `socketpair(2)` descriptors, and the scheduler driven directly on its context.
//
// Waits poll with a 10 s deadline (a passing test returns as soon as the condition holds); negative
// checks ("nothing is delivered") watch a bounded window and can only fail if the thing happens.
// The watched descriptors live at or above `descriptorBase`, above the numbers the rest of the
// process takes, so "descriptor N is closed" and "the new socket got N again" are deterministic.

/// How long a negative check watches for something that must not happen.
private let quietWindow: Duration = .milliseconds(200)

/// Lowest descriptor number for the sockets the conformance suite watches.
private let descriptorBase = Int32(min(ProcessInspector.descriptorLimit() / 4, 4096))

/// Lowest descriptor number for the DispatchScheduler-only suite (which may run beside the other).
private let dispatchOnlyDescriptorBase = Int32(min(ProcessInspector.descriptorLimit() / 2, 8192))

@Suite("TransferScheduler conformance", .serialized)
struct SchedulerConformanceTests {
    // MARK: perform and the context

    @Test("perform runs on the context, in submission order, never inline", arguments: BackendConfiguration.allCases)
    func performRunsOnContextInOrder(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let scheduler = harness.scheduler
        #expect(!scheduler.isOnContext)
        #expect(!DispatchQueue.global().sync { scheduler.isOnContext })

        // One submitter: strict order, every block on the context.
        let order = Locked<[Int]>([])
        let offContext = Locked(0)
        for index in 0..<500 {
            scheduler.perform {
                if !scheduler.isOnContext { offContext.withLock { $0 += 1 } }
                order.withLock { $0.append(index) }
            }
        }
        #expect(await waitUntil { order.value.count == 500 })
        #expect(order.value == Array(0..<500))
        #expect(offContext.value == 0)

        // Several submitters at once: each one's blocks keep their order.
        let perThread = Locked<[Int: [Int]]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<250 {
                scheduler.perform { perThread.withLock { $0[thread, default: []].append(index) } }
            }
        }
        #expect(await waitUntil { perThread.value.values.reduce(0) { $0 + $1.count } == 1000 })
        for (thread, indices) in perThread.value {
            #expect(indices == Array(0..<250), "submitter \(thread) saw its blocks out of order")
        }

        // From the context itself: the new block cannot run before the current one returns.
        let innerRan = Locked(false)
        let ranInline = await harness.onContext { scheduler -> Bool in
            scheduler.perform { innerRan.set(true) }
            return innerRan.value
        }
        #expect(ranInline == false)
        #expect(await waitUntil { innerRan.value })

        await harness.finish()
    }

    // MARK: Socket readiness

    @Test("read readiness arrives after the peer writes, and only then", arguments: BackendConfiguration.allCases)
    func readReadinessAfterPeerWrites(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pair = try harness.sockets.make()
        let local = pair.local

        await harness.onContext { $0.setInterest(.read, for: local) }
        #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local).total == 0 })

        try pair.sendFromPeer()
        #expect(await waitUntil { harness.probe.counts(for: local).read >= 1 })
        #expect(harness.probe.counts(for: local).write == 0)

        await harness.onContext { $0.close(socket: local) }
        await harness.finish()
    }

    @Test("an empty interest delivers nothing; asking again delivers again", arguments: BackendConfiguration.allCases)
    func emptyInterestAndRearming(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pair = try harness.sockets.make()
        let local = pair.local

        // Twice with a negative window, the way curl parks a connection in its pool and reuses it.
        for _ in 0..<2 {
            let before = harness.probe.counts(for: local).read
            await harness.onContext { $0.setInterest(.read, for: local) }
            try pair.sendFromPeer()
            #expect(await waitUntil { harness.probe.counts(for: local).read > before })

            let parked = await harness.onContext { scheduler -> RecordingEventHandler.SocketCounts in
                scheduler.setInterest([], for: local)
                return harness.probe.counts(for: local)
            }
            try pair.sendFromPeer()  // readable now, but nobody asked
            #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local) == parked })
        }
        // Then many quick park/reuse cycles.
        for cycle in 0..<100 {
            let before = harness.probe.counts(for: local).read
            await harness.onContext { $0.setInterest(.read, for: local) }
            try pair.sendFromPeer()
            guard await waitUntil({ harness.probe.counts(for: local).read > before }) else {
                Issue.record("no read event after re-arming, cycle \(cycle)")
                break
            }
            await harness.onContext { $0.setInterest([], for: local) }
        }

        await harness.onContext { $0.close(socket: local) }
        await harness.finish()
    }

    @Test(
        "write interest fires on a writable socket and stops when no longer asked for (URLSession's busy spin)",
        arguments: BackendConfiguration.allCases
    )
    func writeInterestIsDisarmed(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pair = try harness.sockets.make()
        let local = pair.local

        // Connect phase: curl asks for OUT.
        await harness.onContext { $0.setInterest(.write, for: local) }
        #expect(await waitUntil { harness.probe.counts(for: local).write >= 1 })

        // Connected: curl asks for IN only. The socket stays writable; no event may follow.
        let switched = await harness.onContext { scheduler -> RecordingEventHandler.SocketCounts in
            scheduler.setInterest(.read, for: local)
            return harness.probe.counts(for: local)
        }
        #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local) == switched })

        // The response arrives: a read event, and still no write event.
        try pair.sendFromPeer()
        #expect(await waitUntil { harness.probe.counts(for: local).read > (switched?.read ?? 0) })
        #expect(harness.probe.counts(for: local).write == switched?.write)

        // Both directions, then neither.
        let both = harness.probe.counts(for: local)
        await harness.onContext { $0.setInterest([.read, .write], for: local) }
        #expect(await waitUntil { harness.probe.counts(for: local).write > both.write })
        try pair.sendFromPeer()
        #expect(await waitUntil { harness.probe.counts(for: local).read > both.read })
        let parked = await harness.onContext { scheduler -> RecordingEventHandler.SocketCounts in
            scheduler.setInterest([], for: local)
            return harness.probe.counts(for: local)
        }
        #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local) == parked })

        await harness.onContext { $0.close(socket: local) }
        await harness.finish()
    }

    @Test("data left unread is reported again (level-triggered)", arguments: BackendConfiguration.allCases)
    func unreadDataIsReportedAgain(_ backend: BackendConfiguration) async throws {
        // curl may leave bytes in a socket after an event. CF watches run-loop ports edge-triggered, so
        // the run loop's epoll source rechecks by itself; libdispatch re-arms a read source one-shot
        // and level-triggered after each handler, which the dispatch epoll source relies on.
        let bytesRead = Locked(0)
        let harness = Harness(backend, onSocketReady: { _, socket, _ in
            var byte: UInt8 = 0
            if recv(socket, &byte, 1, 0) == 1 { bytesRead.withLock { $0 += 1 } }  // one byte per event
        })
        let pair = try harness.sockets.make()
        let local = pair.local

        await harness.onContext { $0.setInterest(.read, for: local) }
        try pair.sendFromPeer(count: 3)
        #expect(await waitUntil { bytesRead.value == 3 })
        #expect(harness.probe.counts(for: local).read >= 3)

        await harness.onContext { $0.close(socket: local) }
        await harness.finish()
    }

    @Test("an interest changed to write on a still-readable socket is reported", arguments: BackendConfiguration.allCases)
    func interestChangedInsideAnEventIsReported(_ backend: BackendConfiguration) async throws {
        // With epoll the socket is still queued as ready from the read when its mask changes, so the
        // kernel does not signal the set again: the scheduler must find it anyway.
        let harness = Harness(backend, onSocketReady: { scheduler, socket, events in
            if events.contains(.read) {
                scheduler.setInterest(.write, for: socket)  // the data is left unread
            } else if events.contains(.write) {
                scheduler.setInterest([], for: socket)
            }
        })
        let pair = try harness.sockets.make()
        let local = pair.local

        await harness.onContext { $0.setInterest(.read, for: local) }
        try pair.sendFromPeer()
        #expect(await waitUntil { harness.probe.counts(for: local).write >= 1 })
        #expect(harness.probe.counts(for: local).read == 1, "read was disarmed while the data was still there")

        await harness.onContext { $0.close(socket: local) }
        await harness.finish()
    }

    @Test(
        "an event fetched for a socket closed meanwhile never reaches its reused number",
        arguments: BackendConfiguration.allCases
    )
    func staleEventsDoNotReachAReusedDescriptor(_ backend: BackendConfiguration) async throws {
        // High numbers: other threads take the lowest free ones, so none can grab `other` between
        // its close and the dup2 below (which would then clobber their descriptor).
        let first = try SocketPair(localAtOrAbove: descriptorBase)
        let second = try SocketPair(localAtOrAbove: descriptorBase)
        let replacement = try SocketPair(localAtOrAbove: descriptorBase)
        defer {
            first.closePeer()
            second.closePeer()
            replacement.closePeer()
            _ = close(replacement.local)
        }
        let reused = Locked<Int32?>(nil)
        let harness = Harness(backend, onSocketReady: { scheduler, socket, _ in
            guard reused.value == nil else { return }
            // The first of the two events: close the other socket, put a silent socket under its
            // number, and watch that. The other socket's event may already be fetched or signalled.
            let other = socket == first.local ? second.local : first.local
            SocketPair.drain(socket)
            scheduler.close(socket: other)
            // A scheduler that closes in a cancel handler later (dispatch sources) still owns the
            // number: it cannot be reused yet, so there is no stale event to check.
            guard !ProcessInspector.isOpen(other) else {
                reused.set(-1)
                return
            }
            guard dup2(replacement.local, other) == other else { return }
            reused.set(other)
            scheduler.setInterest(.read, for: other)
        })

        // Both become ready before the context looks: one pass sees both.
        await harness.onContext { scheduler in
            scheduler.setInterest(.read, for: first.local)
            scheduler.setInterest(.read, for: second.local)
            try? first.sendFromPeer()
            try? second.sendFromPeer()
        }
        #expect(await waitUntil { reused.value != nil })
        let number = try #require(reused.value)
        guard number >= 0 else {
            await harness.finish()
            return
        }
        for _ in 0..<3 { await harness.onContext { _ in } }
        // The silent socket under `number` was never readable: any event for it was the old one's.
        #expect(harness.probe.counts(for: number).total == 0)
        await harness.finish()  // closes `number` with the scheduler's other sockets
    }

    @Test("write interest on a full socket waits until there is room", arguments: BackendConfiguration.allCases)
    func writeReadinessOnlyWhenWritable(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pair = try harness.sockets.make()
        let local = pair.local
        #expect(SocketPair.fillSendBuffer(of: local) > 0)

        await harness.onContext { $0.setInterest(.write, for: local) }
        #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local).total == 0 })

        SocketPair.drain(pair.peer)
        #expect(await waitUntil { harness.probe.counts(for: local).write >= 1 })

        await harness.onContext { $0.close(socket: local) }
        await harness.finish()
    }

    @Test(
        "read interest added to a socket already watched for writing gets read events, and only those",
        arguments: BackendConfiguration.allCases
    )
    func readAddedAfterWrite(_ backend: BackendConfiguration) async throws {
        // libdispatch (Swift 6.3.1) files a read source registered while a write source on the same
        // descriptor is armed as a writer: it never fires for data and fires on writability instead.
        let harness = Harness(backend)
        for round in 0..<20 {
            let pair = try SocketPair(localAtOrAbove: descriptorBase)
            defer { pair.closePeer() }
            let local = pair.local
            #expect(SocketPair.fillSendBuffer(of: local) > 0)
            let start = harness.probe.counts(for: local)  // the number may have been watched before

            // Waiting to send (a request body on a full socket), then also waiting for the response.
            await harness.onContext { $0.setInterest(.write, for: local) }
            if round == 0 {
                #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local) == start })
            }
            await harness.onContext { $0.setInterest([.read, .write], for: local) }
            try pair.sendFromPeer()
            guard await waitUntil({ harness.probe.counts(for: local).read > start.read }) else {
                Issue.record("round \(round): no read event with read and write interest")
                break
            }
            #expect(harness.probe.counts(for: local).write == start.write)

            // The peer reads: writability, and no read event with it.
            let beforeRoom = harness.probe.counts(for: local)
            SocketPair.drain(pair.peer)
            #expect(await waitUntil { harness.probe.counts(for: local).write > beforeRoom.write })
            let parked = await harness.onContext { scheduler -> RecordingEventHandler.SocketCounts in
                scheduler.setInterest(.read, for: local)
                return harness.probe.counts(for: local)
            }
            // CoreFoundation's CFSocket now and then reports a read callback with nothing to read
            // here, as the peer drains its side and the socket turns writable (once in 500 rounds:
            // 1 of 25 runs of this test): one such extra is tolerated there (curl's read then finds
            // nothing). libdispatch's misfiled read source fires on every writability and never for
            // data (caught above).
            let spuriousReads = backend == .runLoopCFSocket ? 1 : 0
            #expect((parked?.read ?? .max) <= beforeRoom.read + spuriousReads,
                    "round \(round): read events fired on writability")

            // And the read direction still works on its own.
            try pair.sendFromPeer()
            #expect(await waitUntil { harness.probe.counts(for: local).read > beforeRoom.read })

            await harness.onContext { $0.close(socket: local) }
            #expect(await waitUntil { !ProcessInspector.isOpen(local) })
        }
        await harness.finish()
    }

    @Test("every handler call happens on the context", arguments: BackendConfiguration.allCases)
    func handlerCallsOnContext(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pairs = try harness.sockets.make(4)

        await harness.onContext { scheduler in
            for (index, pair) in pairs.enumerated() {
                scheduler.setInterest(index.isMultiple(of: 2) ? .read : [.read, .write], for: pair.local)
            }
            scheduler.setTimer(.after(milliseconds: 0))
        }
        for pair in pairs { try pair.sendFromPeer() }
        #expect(await waitUntil { pairs.allSatisfy { harness.probe.counts(for: $0.local).read >= 1 } })
        #expect(await waitUntil { harness.probe.timerFireCount >= 1 })
        await harness.onContext { scheduler in
            for pair in pairs { scheduler.setInterest(.read, for: pair.local) }
            scheduler.setTimer(.after(milliseconds: 5))
        }
        #expect(await waitUntil { harness.probe.timerFireCount >= 2 })
        #expect(harness.probe.totalSocketEvents >= pairs.count)
        #expect(harness.probe.callsOffContext == 0)

        await harness.onContext { scheduler in
            for pair in pairs { scheduler.close(socket: pair.local) }
        }
        await harness.finish()
    }

    // MARK: Closing

    @Test("close(socket:) closes the descriptor and nothing is delivered for it afterwards", arguments: BackendConfiguration.allCases)
    func closeStopsDeliveryAndCloses(_ backend: BackendConfiguration) async throws {
        // The probe does not drain: the socket stays readable, so a watch that outlived the close
        // would keep firing.
        let harness = Harness(backend, drainReads: false)
        let pair = try harness.sockets.make()
        let local = pair.local

        await harness.onContext { $0.setInterest([.read], for: local) }
        try pair.sendFromPeer()
        #expect(await waitUntil { harness.probe.counts(for: local).read >= 1 })

        let atClose = await harness.onContext { scheduler -> RecordingEventHandler.SocketCounts in
            scheduler.close(socket: local)
            return harness.probe.counts(for: local)
        }
        #expect(await waitUntil { !ProcessInspector.isOpen(local) })
        #expect(await holdsThroughout(quietWindow) { harness.probe.counts(for: local) == atClose })
        #expect(await waitUntil { await harness.diagnostics()?.pendingCloses == 0 })
        #expect(await harness.diagnostics()?.watchedSockets == 0)

        await harness.finish()
    }

    @Test("close(socket:) of a parked watch (empty interest) closes the descriptor", arguments: BackendConfiguration.allCases)
    func closeOfParkedWatch(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pair = try harness.sockets.make()
        let local = pair.local

        await harness.onContext { $0.setInterest([.read, .write], for: local) }
        #expect(await waitUntil { harness.probe.counts(for: local).write >= 1 })
        await harness.onContext { $0.setInterest([], for: local) }
        try pair.sendFromPeer()  // pending readiness on a parked watch
        await harness.onContext { $0.close(socket: local) }
        #expect(await waitUntil { !ProcessInspector.isOpen(local) })
        #expect(await waitUntil { await harness.diagnostics() == SchedulerDiagnostics() })

        await harness.finish()
    }

    @Test("a descriptor that was never watched is closed at once", arguments: BackendConfiguration.allCases)
    func closeOfUnwatchedDescriptor(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pair = try harness.sockets.make()
        let local = pair.local

        let openAfterClose = await harness.onContext { scheduler -> Bool in
            scheduler.close(socket: local)
            return ProcessInspector.isOpen(local)
        }
        #expect(openAfterClose == false)
        #expect(await harness.diagnostics() == SchedulerDiagnostics())

        await harness.finish()
    }

    @Test("a reused descriptor number is watched like a new one (200 times)", arguments: BackendConfiguration.allCases)
    func descriptorNumberReuse(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        var previous: Int32?
        var reused = 0
        var delivered = 0

        for iteration in 0..<200 {
            let pair = try SocketPair(localAtOrAbove: descriptorBase)
            defer { pair.closePeer() }
            let local = pair.local
            if local == previous { reused += 1 }
            previous = local
            let before = harness.probe.counts(for: local)

            if iteration.isMultiple(of: 2) {
                // curl's pattern: OUT while connecting, then IN (two sources to cancel at close).
                await harness.onContext { $0.setInterest(.write, for: local) }
                guard await waitUntil({ harness.probe.counts(for: local).write > before.write }) else {
                    Issue.record("iteration \(iteration): no write event on descriptor \(local)")
                    break
                }
            }
            await harness.onContext { $0.setInterest(.read, for: local) }
            try pair.sendFromPeer()
            guard await waitUntil({ harness.probe.counts(for: local).read > before.read }) else {
                Issue.record("iteration \(iteration): no read event on descriptor \(local)")
                break
            }
            delivered += 1

            // The next pair is created as soon as the number is free: a scheduler that closed the
            // descriptor before libdispatch let go of it would lose the next watch's events.
            await harness.onContext { $0.close(socket: local) }
            guard await waitUntil({ !ProcessInspector.isOpen(local) }) else {
                Issue.record("iteration \(iteration): descriptor \(local) was not closed")
                break
            }
        }
        #expect(delivered == 200)
        #expect(reused == 199, "the kernel should hand out the same number again")
        #expect(await waitUntil { await harness.diagnostics()?.pendingCloses == 0 })

        await harness.finish()
    }

    // MARK: Timer

    @Test(".after(0) fires once, never inside setTimer", arguments: BackendConfiguration.allCases)
    func timerAfterZero(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let firesInsideCall = await harness.onContext { scheduler -> Int in
            scheduler.setTimer(.after(milliseconds: 0))
            return harness.probe.timerFireCount
        }
        #expect(firesInsideCall == 0)
        #expect(await waitUntil { harness.probe.timerFireCount == 1 })
        #expect(await holdsThroughout(quietWindow) { harness.probe.timerFireCount == 1 })
        #expect(await harness.diagnostics()?.timerArmed == false)
        await harness.finish()
    }

    @Test(".after(n) fires once, not early", arguments: BackendConfiguration.allCases)
    func timerAfterDelay(_ backend: BackendConfiguration) async throws {
        let fireTimes = Locked<[ContinuousClock.Instant]>([])
        let harness = Harness(backend, onTimerFired: { _ in fireTimes.withLock { $0.append(.now) } })
        let armedAt = await harness.onContext { scheduler -> ContinuousClock.Instant in
            let now = ContinuousClock.now
            scheduler.setTimer(.after(milliseconds: 50))
            return now
        }
        #expect(await harness.diagnostics()?.timerArmed == true || harness.probe.timerFireCount == 1)
        #expect(await waitUntil { harness.probe.timerFireCount == 1 })
        #expect(await holdsThroughout(quietWindow) { harness.probe.timerFireCount == 1 })
        if let armedAt, let firedAt = fireTimes.value.first {
            // A few milliseconds of slack for clock granularity; a correct timer is never early.
            #expect(armedAt.duration(to: firedAt) >= .milliseconds(45))
        }
        #expect(await harness.diagnostics()?.timerArmed == false)
        await harness.finish()
    }

    @Test("a new timer request replaces the previous one", arguments: BackendConfiguration.allCases)
    func timerRearmReplaces(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)

        // Shortened: an hour, then 20 ms. Only the second can fire within the wait.
        await harness.onContext { scheduler in
            scheduler.setTimer(.after(milliseconds: 3_600_000))
            scheduler.setTimer(.after(milliseconds: 20))
        }
        #expect(await waitUntil { harness.probe.timerFireCount == 1 })
        #expect(await holdsThroughout(quietWindow) { harness.probe.timerFireCount == 1 })

        // Lengthened: 20 ms, then an hour. Nothing fires.
        await harness.onContext { scheduler in
            scheduler.setTimer(.after(milliseconds: 20))
            scheduler.setTimer(.after(milliseconds: 3_600_000))
        }
        #expect(await holdsThroughout(quietWindow) { harness.probe.timerFireCount == 1 })
        #expect(await harness.diagnostics()?.timerArmed == true)

        await harness.onContext { $0.setTimer(.disarm) }
        #expect(await harness.diagnostics()?.timerArmed == false)
        await harness.finish()
    }

    @Test(".disarm prevents a pending fire", arguments: BackendConfiguration.allCases)
    func timerDisarm(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        await harness.onContext { scheduler in
            scheduler.setTimer(.after(milliseconds: 30))
            scheduler.setTimer(.disarm)
        }
        await harness.onContext { scheduler in
            scheduler.setTimer(.after(milliseconds: 0))
            scheduler.setTimer(.disarm)
        }
        #expect(await holdsThroughout(quietWindow) { harness.probe.timerFireCount == 0 })
        #expect(await harness.diagnostics()?.timerArmed == false)
        await harness.finish()
    }

    @Test("the one timer can be re-armed again and again, also from its own fire", arguments: BackendConfiguration.allCases)
    func timerRearmedRepeatedly(_ backend: BackendConfiguration) async throws {
        // curl re-arms the timer from inside the socket action that the fire triggers.
        let selfRearms = Locked(0)
        let harness = Harness(backend) { scheduler in
            let rearm = selfRearms.withLock { budget -> Bool in
                guard budget > 0 else { return false }
                budget -= 1
                return true
            }
            if rearm { scheduler.setTimer(.after(milliseconds: 1)) }
        }
        // Re-armed from outside, once per fire.
        for round in 1...20 {
            await harness.onContext { $0.setTimer(.after(milliseconds: round % 3)) }
            guard await waitUntil({ harness.probe.timerFireCount == round }) else {
                Issue.record("the timer did not fire in round \(round)")
                break
            }
        }
        #expect(harness.probe.timerFireCount == 20)

        // Re-armed from its own fire: one kick, then 19 re-arms inside the handler.
        selfRearms.set(19)
        await harness.onContext { $0.setTimer(.after(milliseconds: 0)) }
        #expect(await waitUntil { harness.probe.timerFireCount == 40 })
        #expect(await holdsThroughout(quietWindow) { harness.probe.timerFireCount == 40 })
        #expect(await harness.diagnostics()?.timerArmed == false)
        await harness.finish()
    }

    // MARK: Diagnostics and shutdown

    @Test("diagnostics count watches, armed sockets, pending closes and the timer", arguments: BackendConfiguration.allCases)
    func diagnosticsCounts(_ backend: BackendConfiguration) async throws {
        let harness = Harness(backend)
        let pairs = try harness.sockets.make(3)
        let (first, second, third) = (pairs[0].local, pairs[1].local, pairs[2].local)
        SocketPair.fillSendBuffer(of: third)  // so write interest on it stays quiet

        #expect(await harness.diagnostics() == SchedulerDiagnostics())
        let watching = await harness.onContext { scheduler -> SchedulerDiagnostics in
            scheduler.setInterest(.read, for: first)
            scheduler.setInterest([], for: second)
            scheduler.setInterest(.write, for: third)
            scheduler.setTimer(.after(milliseconds: 3_600_000))
            return scheduler.diagnostics
        }
        #expect(watching == SchedulerDiagnostics(watchedSockets: 3, armedSockets: 2, pendingCloses: 0, timerArmed: true))

        let swapped = await harness.onContext { scheduler -> SchedulerDiagnostics in
            scheduler.setInterest([], for: first)
            scheduler.setInterest([.read, .write], for: second)
            scheduler.setInterest([], for: second)
            scheduler.setInterest(.read, for: second)
            scheduler.setTimer(.disarm)
            return scheduler.diagnostics
        }
        #expect(swapped == SchedulerDiagnostics(watchedSockets: 3, armedSockets: 2, pendingCloses: 0, timerArmed: false))

        let closing = await harness.onContext { scheduler -> SchedulerDiagnostics in
            scheduler.close(socket: first)
            return scheduler.diagnostics
        }
        #expect(closing?.watchedSockets == 2)
        #expect(closing?.armedSockets == 2)
        #expect((closing?.pendingCloses ?? -1) <= 1, "one close requested: at most one pending")
        #expect(await waitUntil { await harness.diagnostics()?.pendingCloses == 0 })
        #expect(!ProcessInspector.isOpen(first))

        await harness.onContext { scheduler in
            scheduler.close(socket: second)
            scheduler.close(socket: third)
        }
        #expect(await waitUntil { await harness.diagnostics() == SchedulerDiagnostics() })
        #expect(!ProcessInspector.isOpen(second))
        #expect(!ProcessInspector.isOpen(third))
        await harness.finish()
    }

    @Test("shutdown closes what is still watched, releases the handler, then completes", arguments: BackendConfiguration.allCases)
    func shutdownReleasesEverything(_ backend: BackendConfiguration) async throws {
        let scheduler = backend.makeScheduler()
        let probe = WeakProbe(bindingTo: scheduler)
        let pairs = try (0..<4).map { _ in try SocketPair(localAtOrAbove: descriptorBase) }
        defer { pairs.forEach { $0.closePeer() } }
        let locals = pairs.map(\.local)

        let watched = await scheduler.runOnContext { () -> SchedulerDiagnostics in
            scheduler.setInterest(.read, for: locals[0])                // armed
            scheduler.setInterest([.read, .write], for: locals[1])      // armed, then parked
            scheduler.setInterest([], for: locals[1])
            scheduler.setInterest([], for: locals[2])                   // parked from the start
            scheduler.setInterest(.write, for: locals[3])               // armed and firing
            scheduler.setTimer(.after(milliseconds: 3_600_000))
            return scheduler.diagnostics
        }
        #expect(watched?.watchedSockets == 4)
        try pairs[0].sendFromPeer()
        try pairs[1].sendFromPeer()

        #expect(await scheduler.shutdownAndWait())
        for local in locals {
            #expect(!ProcessInspector.isOpen(local), "descriptor \(local) still open after shutdown")
        }
        #expect(probe.isReleased, "the handler is still referenced after shutdown completed")
    }

    // MARK: Lifetime

    /// A scheduler holds nothing that keeps it alive once shut down: the test's reference is the
    /// last. (`RunLoopScheduler` lives on a network thread that outlives it; the thread holds only
    /// its CF sources and timer, never the scheduler.)
    @Test("the scheduler is freed after shutdown", arguments: BackendConfiguration.allCases)
    func schedulerFreedAfterShutdown(_ backend: BackendConfiguration) async throws {
        let pair = try SocketPair(localAtOrAbove: descriptorBase)
        defer { pair.closePeer() }
        let released = try await Self.runAndDrop(backend, shutdown: true, watching: pair.local)
        #expect(await waitUntil { released.isReleased })
        #expect(!ProcessInspector.isOpen(pair.local))
    }

    /// Dropped while it still watches a socket (armed for reading, parked for writing) and holds an
    /// armed timer: the scheduler is freed, and what it held is taken down on its context, closing
    /// the socket.
    @Test("a scheduler dropped without shutdown still closes its descriptors", arguments: BackendConfiguration.allCases)
    func droppedWithoutShutdown(_ backend: BackendConfiguration) async throws {
        let pair = try SocketPair(localAtOrAbove: descriptorBase)
        defer { pair.closePeer() }
        let released = try await Self.runAndDrop(backend, shutdown: false, watching: pair.local)
        #expect(await waitUntil { released.isReleased })
        #expect(await waitUntil { !ProcessInspector.isOpen(pair.local) })
    }

    /// Creates a scheduler that watches `socket` (armed for reading, and parked for writing),
    /// optionally shuts it down, and drops it; returns a weak reference to it.
    private static func runAndDrop(
        _ backend: BackendConfiguration, shutdown: Bool, watching socket: Int32
    ) async throws -> WeakReference {
        let scheduler = backend.makeScheduler()
        let probe = RecordingEventHandler(scheduler: scheduler)
        scheduler.bind(probe)
        _ = await scheduler.runOnContext {
            scheduler.setInterest([.read, .write], for: socket)
            scheduler.setInterest(.read, for: socket)
            scheduler.setTimer(.after(milliseconds: 3_600_000))
        }
        if shutdown {
            #expect(await scheduler.shutdownAndWait())
        }
        return WeakReference(scheduler)
    }
}

// MARK: - DispatchScheduler only

@Suite("DispatchScheduler specifics", .serialized)
struct DispatchSchedulerSpecificTests {
    private let base = dispatchOnlyDescriptorBase

    @Test("name and context with a target queue")
    func contextWithTargetQueue() async {
        let target = DispatchQueue(label: "curlew.tests.target")
        let scheduler = DispatchScheduler(label: "curlew.tests.targeting", target: target, sockets: .sourcePerSocket)
        #expect(scheduler.name == "dispatch")
        #expect(await scheduler.runOnContext { scheduler.isOnContext } == true)
        #expect(!target.sync { scheduler.isOnContext })
        #expect(!scheduler.isOnContext)
        #expect(await scheduler.shutdownAndWait())
    }

    @Test("a suspended queue performs nothing and delivers nothing until resumed")
    func suspendedQueueStopsTheContext() async throws {
        let scheduler = DispatchScheduler(sockets: .sourcePerSocket)
        let probe = RecordingEventHandler(scheduler: scheduler) { socket, _ in SocketPair.drain(socket) }
        scheduler.bind(probe)
        let pair = try SocketPair(localAtOrAbove: self.base)
        defer { pair.closePeer() }
        let local = pair.local
        #expect(await scheduler.runOnContext { scheduler.setInterest(.read, for: local) } != nil)
        // The read source's registration runs on the queue after the block that made it; let it
        // finish first. Suspending while it runs leaves libdispatch free to deliver, from that same
        // invocation, an event that arrives meanwhile: the queue's drain was already under way.
        #expect(await scheduler.runOnContext {} != nil)

        scheduler.queue.suspend()
        let performed = Locked(false)
        scheduler.perform { performed.set(true) }
        try pair.sendFromPeer()
        let stayedStopped = await holdsThroughout(quietWindow) { !performed.value && probe.totalSocketEvents == 0 }
        scheduler.queue.resume()
        #expect(stayedStopped)
        #expect(await waitUntil { performed.value && probe.counts(for: local).read >= 1 })

        _ = await scheduler.runOnContext { scheduler.close(socket: local) }
        #expect(await scheduler.shutdownAndWait())
    }

    @Test("a disarmed direction is suspended, not just filtered")
    func disarmSuspendsTheSource() async throws {
        let scheduler = DispatchScheduler(sockets: .sourcePerSocket)
        let probe = RecordingEventHandler(scheduler: scheduler) { socket, _ in SocketPair.drain(socket) }
        scheduler.bind(probe)
        let pair = try SocketPair(localAtOrAbove: self.base)
        defer { pair.closePeer() }
        let local = pair.local

        // Writable socket, write interest: events flow.
        _ = await scheduler.runOnContext { scheduler.setInterest([.read, .write], for: local) }
        #expect(await waitUntil { probe.counts(for: local).write >= 1 })
        // Read only on a writable socket: the write source itself must stop, not only its events.
        let dropped = await scheduler.runOnContext { () -> Int in
            scheduler.setInterest(.read, for: local)
            return scheduler.droppedEventCount
        }
        #expect(await holdsThroughout(quietWindow) {
            (await scheduler.runOnContext { scheduler.droppedEventCount } ?? .max) <= (dropped ?? 0) + 1
        })
        // Parked, then readable: the read source must stay quiet too.
        _ = await scheduler.runOnContext { scheduler.setInterest([], for: local) }
        try pair.sendFromPeer()
        #expect(await holdsThroughout(quietWindow) {
            (await scheduler.runOnContext { scheduler.droppedEventCount } ?? .max) <= (dropped ?? 0) + 2
        })

        _ = await scheduler.runOnContext { scheduler.close(socket: local) }
        #expect(await scheduler.shutdownAndWait())
    }

}

// MARK: - Helpers

/// One scheduler of a backend, bound to a probe, driven from the test thread.
private struct Harness: Sendable {
    let scheduler: any TransferScheduler
    let probe: RecordingEventHandler
    /// The test's socket pairs, above `descriptorBase`; ``finish(sourceLocation:)`` closes their peers.
    let sockets = SocketPairs(localAtOrAbove: descriptorBase)

    /// - Parameters:
    ///   - drainReads: Whether the probe reads a socket dry on each read event (so it does not stay
    ///     readable and fire again).
    ///   - onTimerFired: Runs on the context after each counted timer fire.
    ///   - onSocketReady: Replaces the draining: runs on the context after each counted socket event.
    init(
        _ backend: BackendConfiguration,
        drainReads: Bool = true,
        onTimerFired: @escaping @Sendable (any TransferScheduler) -> Void = { _ in },
        onSocketReady: (@Sendable (any TransferScheduler, Int32, SocketEvents) -> Void)? = nil
    ) {
        let scheduler = backend.makeScheduler()
        self.scheduler = scheduler
        self.probe = RecordingEventHandler(
            scheduler: scheduler,
            onSocketReady: { [weak scheduler] socket, events in
                if let onSocketReady {
                    if let scheduler { onSocketReady(scheduler, socket, events) }
                } else if drainReads && events.contains(.read) {
                    SocketPair.drain(socket)
                }
            },
            onTimerFired: { [weak scheduler] in
                if let scheduler { onTimerFired(scheduler) }
            }
        )
        scheduler.bind(self.probe)
    }

    /// Runs `body` on the context and returns its result; records an issue if the context did not
    /// run it within the default timeout.
    @discardableResult
    func onContext<Result: Sendable>(
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable (any TransferScheduler) -> Result
    ) async -> Result? {
        let scheduler = self.scheduler
        let result = await scheduler.runOnContext { body(scheduler) }
        if result == nil {
            Issue.record("the context did not run the work within \(defaultTestTimeout)", sourceLocation: sourceLocation)
        }
        return result
    }

    /// The scheduler's diagnostics, read on the context.
    func diagnostics() async -> SchedulerDiagnostics? {
        await self.scheduler.runOnContext { [scheduler] in scheduler.diagnostics }
    }

    /// Shuts the scheduler down and checks what every test must leave behind, then closes the peers
    /// of the test's socket pairs.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(self.probe.callsOffContext == 0, "handler called off the context", sourceLocation: sourceLocation)
        #expect(await self.scheduler.shutdownAndWait(), "shutdown did not complete", sourceLocation: sourceLocation)
        self.sockets.closePeers()
    }
}

/// A probe bound to a scheduler that the test holds only weakly, to see the scheduler release it.
private struct WeakProbe: Sendable {
    private let reference: WeakReference

    init(bindingTo scheduler: any TransferScheduler) {
        let probe = RecordingEventHandler(scheduler: scheduler)
        scheduler.bind(probe)
        self.reference = WeakReference(probe)
    }

    var isReleased: Bool { self.reference.isReleased }
}

/// A weak reference that can cross threads.
private final class WeakReference: Sendable {
    private let box: Locked<WeakBox>

    private struct WeakBox: @unchecked Sendable {
        // @unchecked Sendable: only a weak pointer to a Sendable object, read and written under `box`'s lock.
        weak var object: AnyObject?
    }

    init(_ object: some AnyObject & Sendable) {
        self.box = Locked(WeakBox(object: object))
    }

    var isReleased: Bool { self.box.value.object == nil }
}
