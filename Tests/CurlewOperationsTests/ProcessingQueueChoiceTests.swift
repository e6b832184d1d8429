import CurlewOperations
import Testing

/// Which processing queue the next response goes to, without queues: the first one not stuck in a
/// block that has run for `slowBlock` or longer.
@Suite("Processing queue choice")
struct ProcessingQueueChoiceTests {
    private let now: UInt64 = 10_000_000_000
    private var slow: UInt64 { ProcessingQueues.slowBlock }

    @Test("idle queues: the first")
    func idle() {
        #expect(ProcessingQueues.choose(runningSince: [0, 0, 0, 0], now: self.now) == 0)
    }

    @Test("a queue running a block younger than slowBlock still takes the response")
    func busyButNotSlow() {
        #expect(ProcessingQueues.choose(runningSince: [self.now - self.slow + 1, 0, 0, 0], now: self.now) == 0)
        #expect(ProcessingQueues.choose(runningSince: [self.now, 0, 0, 0], now: self.now) == 0)
    }

    @Test("a stuck queue is passed over for the next one that is not")
    func stuck() {
        #expect(ProcessingQueues.choose(runningSince: [self.now - self.slow, 0, 0, 0], now: self.now) == 1)
        let twoStuck = [self.now - 5 * self.slow, self.now - self.slow, self.now - 10, 0]
        #expect(ProcessingQueues.choose(runningSince: twoStuck, now: self.now) == 2)
    }

    @Test("every queue stuck: the one whose block started last")
    func allStuck() {
        let started = [self.now - 9 * self.slow, self.now - 2 * self.slow, self.now - 7 * self.slow, self.now - 3 * self.slow]
        #expect(ProcessingQueues.choose(runningSince: started, now: self.now) == 1)
    }
}
