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
        let first = admission.release(self.a)
        let second = admission.release(self.a)
        #expect(first == 3)
        #expect(second == 4)
        #expect(admission.heldSlots(for: self.a) == 2, "a released slot passes straight to the next in line")
        let third = admission.release(self.a)
        let fourth = admission.release(self.a)
        #expect(third == 5)
        #expect(fourth == 6)
        let none1 = admission.release(self.a)
        let none2 = admission.release(self.a)
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
        let next = admission.release(self.b)
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
        let first = admission.release(self.a)
        let second = admission.release(self.a)
        let third = admission.release(self.a)
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
        let freed = admission.release(self.a)
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
        while let next = admission.release(self.a) { served.append(next) }
        #expect(served == Array(stride(from: 2, through: 10_000, by: 2)))
        #expect(admission.waitingCount == 0)
    }
}
