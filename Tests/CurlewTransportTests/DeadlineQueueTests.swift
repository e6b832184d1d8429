import Testing
@testable import CurlewTransport

@Suite("Deadline queue")
struct DeadlineQueueTests {
    @Test func popsDueDeadlinesEarliestFirst() {
        let start = ContinuousClock.now
        var queue = DeadlineQueue()
        let offsets = [50, 10, 40, 10, 30, 20, 60]
        for (id, offset) in offsets.enumerated() {
            queue.insert(start + .milliseconds(offset), for: UInt64(id))
        }
        #expect(queue.earliest == start + .milliseconds(10))
        #expect(queue.popDue(at: start) == nil, "nothing is due before the earliest deadline")
        var popped: [Int] = []
        while let entry = queue.popDue(at: start + .milliseconds(40)) {
            popped.append(offsets[Int(entry.transferID)])
        }
        #expect(popped == [10, 10, 20, 30, 40])
        #expect(queue.count == 2)
        #expect(queue.earliest == start + .milliseconds(50))
    }

    @Test func compactKeepsOrderOfWhatItKeeps() {
        let start = ContinuousClock.now
        var queue = DeadlineQueue()
        for id in 0..<100 {
            queue.insert(start + .milliseconds((id * 37) % 100), for: UInt64(id))
        }
        queue.compact { $0.transferID % 3 == 0 }
        #expect(queue.count == 34)
        var last = start - .seconds(1)
        while let entry = queue.popDue(at: start + .seconds(1)) {
            #expect(entry.transferID % 3 == 0)
            #expect(entry.deadline >= last)
            last = entry.deadline
        }
        #expect(queue.count == 0 && queue.earliest == nil)
    }
}
