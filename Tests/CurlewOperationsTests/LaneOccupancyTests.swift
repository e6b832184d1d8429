import CurlewOperations
import Testing

/// What a processing lane holds besides its running block, without queues: blocks queued behind it,
/// and a completion handler on its thread; never both.
@Suite("Processing lane occupancy")
struct LaneOccupancyTests {
    @Test("a new lane is empty, and takes blocks or a handler")
    func empty() {
        let empty = LaneOccupancy()
        #expect(empty.queued == 0 && !empty.holdsHandler)
        #expect(empty.queuing()?.queued == 1)
        #expect(empty.claimingForHandler()?.holdsHandler == true)
    }

    @Test("blocks are counted as they are queued and start")
    func counting() throws {
        let two = try #require(LaneOccupancy().queuing()?.queuing())
        #expect(two.queued == 2 && !two.holdsHandler)
        #expect(two.starting().queued == 1)
        #expect(two.starting().starting() == LaneOccupancy())
    }

    @Test("no handler runs on a lane with a block queued behind it")
    func noHandlerBeforeQueuedBlocks() throws {
        let one = try #require(LaneOccupancy().queuing())
        #expect(one.claimingForHandler() == nil)
        #expect(one.starting().claimingForHandler() != nil, "once the block has started, the lane is free again")
    }

    @Test("nothing is queued behind a handler; once it returns, the lane takes blocks again")
    func nothingQueuedBehindAHandler() throws {
        let holding = try #require(LaneOccupancy().claimingForHandler())
        #expect(holding.queuing() == nil)
        #expect(holding.claimingForHandler() == nil, "one handler at a time")
        let released = holding.releasingHandler()
        #expect(released == LaneOccupancy())
        #expect(released.queuing()?.queued == 1)
    }
}
