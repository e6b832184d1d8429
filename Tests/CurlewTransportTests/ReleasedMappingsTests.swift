import Testing
@testable import CurlewTransport

/// The policy that keeps released body mappings for reuse, without any mapping.
@Suite("Released mappings")
struct ReleasedMappingsTests {
    private typealias Mapping = ReleasedMappings.Mapping

    @Test("a released mapping is taken again by a body that fits it, once")
    func reuse() {
        var kept = ReleasedMappings()
        #expect(kept.release(Mapping(address: 0x1000, size: 16 << 20)).isEmpty)
        #expect(kept.take(atLeast: 16 << 20) == Mapping(address: 0x1000, size: 16 << 20))
        #expect(kept.take(atLeast: 16 << 20) == nil)
        #expect(kept.keptBytes == 0)
    }

    @Test("a mapping released while another is live is given back; the last live one is kept")
    func onlyTheLastLiveIsKept() {
        var kept = ReleasedMappings()
        kept.noteFreshMapping()
        kept.noteFreshMapping()
        #expect(kept.liveCount == 2)
        #expect(kept.release(Mapping(address: 1, size: 16 << 20)) == [Mapping(address: 1, size: 16 << 20)])
        #expect(kept.release(Mapping(address: 2, size: 16 << 20)).isEmpty)
        #expect(kept.take(atLeast: 16 << 20)?.address == 2)
        #expect(kept.liveCount == 1)
    }

    @Test("the smallest fitting mapping is taken; one too small or more than twice the size is not")
    func bestFit() {
        var kept = ReleasedMappings()
        _ = kept.release(Mapping(address: 1, size: 8 << 20))
        _ = kept.release(Mapping(address: 2, size: 2 << 20))
        _ = kept.release(Mapping(address: 3, size: 4 << 20))
        #expect(kept.take(atLeast: 3 << 20)?.address == 3)
        #expect(kept.take(atLeast: 9 << 20) == nil)
        #expect(kept.take(atLeast: 1 << 20)?.address == 2)
        #expect(kept.take(atLeast: 3 << 20) == nil)  // 8 MiB is more than twice 3 MiB
        #expect(kept.take(atLeast: 5 << 20)?.address == 1)
    }

    @Test("over the count bound the oldest mappings are given back")
    func countBound() {
        var kept = ReleasedMappings(maximumCount: 2, maximumBytes: 1 << 30)
        #expect(kept.release(Mapping(address: 1, size: 4096)).isEmpty)
        #expect(kept.release(Mapping(address: 2, size: 4096)).isEmpty)
        #expect(kept.release(Mapping(address: 3, size: 4096)) == [Mapping(address: 1, size: 4096)])
        #expect(kept.kept.map(\.address) == [2, 3])
    }

    @Test("over the byte bound the oldest mappings are given back, and a mapping larger than the bound is never kept")
    func byteBound() {
        var kept = ReleasedMappings(maximumCount: 8, maximumBytes: 10 << 20)
        #expect(kept.release(Mapping(address: 1, size: 4 << 20)).isEmpty)
        #expect(kept.release(Mapping(address: 2, size: 4 << 20)).isEmpty)
        #expect(kept.release(Mapping(address: 3, size: 4 << 20)) == [Mapping(address: 1, size: 4 << 20)])
        #expect(kept.keptBytes == 8 << 20)
        #expect(kept.release(Mapping(address: 4, size: 11 << 20)) == [Mapping(address: 4, size: 11 << 20)])
        #expect(kept.keptBytes == 8 << 20)
    }

    @Test("with no room at all nothing is kept")
    func noRoom() {
        var kept = ReleasedMappings(maximumCount: 0, maximumBytes: 1 << 30)
        #expect(kept.release(Mapping(address: 1, size: 4096)) == [Mapping(address: 1, size: 4096)])
        #expect(kept.take(atLeast: 1) == nil)
    }
}
