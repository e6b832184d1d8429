import Testing
@testable import CurlewTestServer

/// The fault server's bombs are built, not stored: their checksums must be right, or a client that
/// decodes them whole would fail on the trailer instead of on its limits.
@Suite("Test server: gzip bombs")
struct GzipBombTests {
    @Test("the CRC of a run of zeros, computed in GF(2), matches the byte-wise CRC", arguments: [0, 1, 7, 258, 4096, 100_003])
    func zeroRunCRC(_ count: Int) {
        #expect(CRC32.ofZeros(count: count) == CRC32.of([UInt8](repeating: 0, count: count)))
    }

    @Test func knownCRC() {
        #expect(CRC32.of(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func bombShapes() {
        let single = GzipBomb.single
        #expect(Array(single.prefix(3)) == [0x1F, 0x8B, 8])
        #expect(single.count > 1_000_000 && single.count < 1_100_000)
        let isize = single.suffix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        #expect(isize == UInt32(truncatingIfNeeded: GzipBomb.inflatedSize))
        #expect(GzipBomb.inflatedSize > 1_000_000_000)
        #expect(GzipBomb.double.count < 10_000)
        #expect(Array(GzipBomb.double.prefix(3)) == [0x1F, 0x8B, 8])
    }
}
