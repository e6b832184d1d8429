import Testing
@testable import CurlewTransport

@Suite("Multi handle placement")
struct MultiHandlePlacementTests {
    let api = ConnectionAdmission.Host(scheme: "http", authority: "api.example:80")
    let cdn = ConnectionAdmission.Host(scheme: "https", authority: "cdn.example:443")

    @Test("one handle until it holds its share, then the next opens, up to the maximum")
    func opensWhenFull() {
        var placement = MultiHandlePlacement(transfersPerHandle: 2, maximumHandles: 3)
        let placed = (0..<6).map { _ in placement.place(self.api) }
        #expect(placed == [0, 0, 1, 1, 2, 2])
        #expect(placement.handleCount == 3)
        let beyond = (0..<3).map { _ in placement.place(self.api) }
        #expect(beyond == [0, 1, 2], "at the maximum, the least busy takes the next")
        #expect(placement.attached == [3, 3, 3])
    }

    @Test("a handle with room takes the next before a new one opens")
    func fillsBeforeOpening() {
        var placement = MultiHandlePlacement(transfersPerHandle: 2, maximumHandles: 3)
        _ = (0..<3).map { _ in placement.place(self.api) }  // [2, 1]
        placement.left(0, host: self.api, finished: false)  // [1, 1], no hint
        let next = placement.place(self.cdn)
        #expect(next == 0)
        #expect(placement.handleCount == 2)
    }

    @Test("a transfer goes to the handle where one to its host finished, not the least busy")
    func followsFinishedTransfer() {
        var placement = MultiHandlePlacement(transfersPerHandle: 2, maximumHandles: 3)
        _ = (0..<6).map { _ in placement.place(self.api) }  // [2, 2, 2]
        placement.left(2, host: self.api, finished: true)
        placement.left(0, host: self.api, finished: false)  // [1, 2, 1]: handle 0 is least busy
        #expect(placement.place(self.api) == 2, "handle 2 has the idle connection")
        #expect(placement.place(self.api) == 0, "the hint is used up")
    }

    @Test("hints are per host, and a transfer that did not finish leaves none")
    func hintsPerHost() {
        var placement = MultiHandlePlacement(transfersPerHandle: 1, maximumHandles: 3)
        _ = (0..<3).map { _ in placement.place(self.api) }  // [1, 1, 1]
        placement.left(1, host: self.api, finished: true)
        placement.left(2, host: self.api, finished: false)  // [1, 0, 0]
        #expect(placement.place(self.cdn) == 1, "no hint for cdn: the least busy, the first of two")
        #expect(placement.place(self.api) == 1, "api's hint")
        #expect(placement.place(self.api) == 2, "no hint left: the least busy")
    }

    @Test("with one handle there is no bookkeeping, and one handle stays one")
    func singleHandle() {
        var placement = MultiHandlePlacement(transfersPerHandle: 2, maximumHandles: 1)
        let placed = (0..<5).map { _ in placement.place(self.api) }
        #expect(placed == [0, 0, 0, 0, 0])
        placement.left(0, host: self.api, finished: true)
        #expect(placement.attached == [4])
        #expect(placement.handleCount == 1)
    }

    @Test("a pinned transfer goes to the first handle, however busy")
    func pinned() {
        var placement = MultiHandlePlacement(transfersPerHandle: 1, maximumHandles: 3)
        let placed = (0..<4).map { _ in placement.place(self.cdn, pinned: true) }
        #expect(placed == [0, 0, 0, 0])
        #expect(placement.handleCount == 1)
        #expect(placement.place(self.api) == 1, "an unpinned one opens the next handle")
    }

    @Test("hints for ever new hosts stay bounded")
    func boundedHints() {
        var placement = MultiHandlePlacement(transfersPerHandle: 1, maximumHandles: 2)
        _ = placement.place(self.api)
        _ = placement.place(self.api)  // two handles open
        let limit = MultiHandlePlacement.maximumHintedHosts
        for number in 0..<(limit + 10) {
            let host = ConnectionAdmission.Host(scheme: "http", authority: "host\(number).example:80")
            let index = placement.place(host)
            placement.left(index, host: host, finished: true)
            #expect(placement.hintedHostCount <= limit)
        }
        #expect(placement.hintedHostCount == 10, "all forgotten once, then ten new")
    }

    @Test("a handle that could not be opened is forgotten")
    func abandonedHandle() {
        var placement = MultiHandlePlacement(transfersPerHandle: 1, maximumHandles: 2)
        #expect(placement.place(self.api) == 0)
        #expect(placement.place(self.api) == 1)
        placement.abandonLastHandle()
        #expect(placement.handleCount == 1)
        #expect(placement.place(self.api) == 1, "asked for again")
    }
}
