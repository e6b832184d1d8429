import Testing
@testable import CurlewTransport

@Suite("Connection admission")
struct ConnectionAdmissionTests {
    private let a = ConnectionAdmission.Host(scheme: "http", authority: "a.test")
    private let b = ConnectionAdmission.Host(scheme: "http", authority: "b.test")

    @Test("up to the limit at once, then first come first served")
    func fifo() {
        var admission = ConnectionAdmission()
        #expect(admission.request(1, for: self.a, limit: 2) == .admitted)
        #expect(admission.request(2, for: self.a, limit: 2) == .admitted)
        for id in 3...6 as ClosedRange<UInt64> {
            #expect(admission.request(id, for: self.a, limit: 2) == .waiting)
        }
        #expect(admission.waitingCount == 4)
        let first = admission.release(self.a, limit: { _ in 2 })
        let second = admission.release(self.a, limit: { _ in 2 })
        #expect(first == 3)
        #expect(second == 4)
        #expect(admission.heldSlots(for: self.a) == 2, "a released slot passes straight to the next in line")
        let third = admission.release(self.a, limit: { _ in 2 })
        let fourth = admission.release(self.a, limit: { _ in 2 })
        #expect(third == 5)
        #expect(fourth == 6)
        let none1 = admission.release(self.a, limit: { _ in 2 })
        let none2 = admission.release(self.a, limit: { _ in 2 })
        #expect(none1 == nil && none2 == nil)
        #expect(admission.heldSlots(for: self.a) == 0)
        #expect(admission.waitingCount == 0)
    }

    @Test("hosts are counted apart; no limit admits everyone")
    func perHost() {
        var admission = ConnectionAdmission()
        #expect(admission.request(1, for: self.a, limit: 1) == .admitted)
        #expect(admission.request(2, for: self.a, limit: 1) == .waiting)
        #expect(admission.request(3, for: self.b, limit: 1) == .admitted)
        for id in 10..<20 as Range<UInt64> {
            #expect(admission.request(id, for: ConnectionAdmission.Host(scheme: "http", authority: "c.test"), limit: nil) == .admitted)
        }
        let next = admission.release(self.b, limit: { _ in 1 })
        #expect(next == nil, "b's queue is empty, whatever waits for a")
        #expect(admission.waitingCount == 1)
    }

    @Test("withdrawn transfers are skipped when their turn comes")
    func withdraw() {
        var admission = ConnectionAdmission()
        _ = admission.request(1, for: self.a, limit: 1)
        for id in 2...5 as ClosedRange<UInt64> { _ = admission.request(id, for: self.a, limit: 1) }
        let withdrew2 = admission.withdraw(2)
        let withdrew4 = admission.withdraw(4)
        let withdrew4Again = admission.withdraw(4)
        let withdrew1 = admission.withdraw(1)
        #expect(withdrew2 && withdrew4)
        #expect(!withdrew4Again, "only once")
        #expect(!withdrew1, "1 holds a slot, it does not wait")
        let first = admission.release(self.a, limit: { _ in 1 })
        let second = admission.release(self.a, limit: { _ in 1 })
        let third = admission.release(self.a, limit: { _ in 1 })
        #expect(first == 3)
        #expect(second == 5)
        #expect(third == nil)
        #expect(admission.heldSlots(for: self.a) == 0)
    }

    @Test("a newcomer never overtakes the queue, even where a slot is being passed on")
    func noOvertaking() {
        var admission = ConnectionAdmission()
        _ = admission.request(1, for: self.a, limit: 1)
        _ = admission.request(2, for: self.a, limit: 1)
        // With every waiting transfer withdrawn, the host admits newcomers again.
        admission.withdraw(2)
        let freed = admission.release(self.a, limit: { _ in 1 })
        #expect(freed == nil)
        #expect(admission.request(3, for: self.a, limit: 1) == .admitted)
        #expect(admission.request(4, for: self.a, limit: 1) == .waiting)
        #expect(admission.request(5, for: self.a, limit: 5) == .waiting, "4 waits, so 5 queues behind it")
    }

    @Test("ten thousand waiting, half withdrawn, in linear time")
    func many() {
        var admission = ConnectionAdmission()
        _ = admission.request(0, for: self.a, limit: 1)
        for id in 1...10_000 as ClosedRange<UInt64> { _ = admission.request(id, for: self.a, limit: 1) }
        for id in stride(from: 1, through: 10_000, by: 2) as StrideThrough<UInt64> { admission.withdraw(id) }
        var served: [UInt64] = []
        while let next = admission.release(self.a, limit: { _ in 1 }) { served.append(next) }
        #expect(served == Array(stride(from: 2, through: 10_000, by: 2)))
        #expect(admission.waitingCount == 0)
    }

    @Test("a limit lowered while slots are held: they drain down to it before the queue moves")
    func loweredLimit() {
        var admission = ConnectionAdmission()
        // Five admitted under a high limit (transfers that might share connections)...
        for id in 1...5 as ClosedRange<UInt64> {
            #expect(admission.request(id, for: self.a, limit: 500) == .admitted)
        }
        // ...then the host is known to take one request per connection: the limit is 2.
        #expect(admission.request(6, for: self.a, limit: 2) == .waiting)
        #expect(admission.request(7, for: self.a, limit: 2) == .waiting)
        var granted: [UInt64?] = []
        for _ in 0..<5 { granted.append(admission.release(self.a, limit: { _ in 2 })) }
        #expect(granted == [nil, nil, nil, 6, 7], "5, 4, 3 held: freed; at 2 the slot passes on")
        #expect(admission.heldSlots(for: self.a) == 2)
        #expect(admission.waitingCount == 0)
    }

    @Test("the limit of the first in line decides, and a withdrawn first is skipped")
    func limitOfTheFirstInLine() {
        var admission = ConnectionAdmission()
        for id in 1...3 as ClosedRange<UInt64> { _ = admission.request(id, for: self.a, limit: 3) }
        _ = admission.request(4, for: self.a, limit: 1)  // waits (held 3)
        _ = admission.request(5, for: self.a, limit: 3)  // waits behind 4
        let limits: [UInt64: Int] = [4: 1, 5: 3]
        let first = admission.release(self.a, limit: { limits[$0] })
        #expect(first == nil, "4 may only have 1 held, and 3 are")
        admission.withdraw(4)
        let second = admission.release(self.a, limit: { limits[$0] })
        #expect(second == 5, "4 left; 5 may have 3, and 1 is held")
        #expect(admission.heldSlots(for: self.a) == 2)
    }
}
