import Foundation
import Testing
@testable import CurlewTransport

/// The body limits as values: which apply where, and when a chunk crosses one.
@Suite("Response body limits")
struct ResponseBodyLimitsTests {
    @Test("by default the size cap holds memory bodies only, the decompression ratio every body")
    func defaults() {
        let memory = ResponseBodyLimits(options: TransferOptions(), destination: .memory)
        #expect(memory.maximum == .init(bytes: 64 << 20, inMemory: true))
        #expect(memory.decompression == .ratio(100))
        let file = ResponseBodyLimits(options: TransferOptions(), destination: .file(URL(fileURLWithPath: "/tmp/x")))
        #expect(file.maximum == nil)
        #expect(file.decompression == .ratio(100), "a bomb streamed to a file fills the disk")
        #expect(file.check(total: 1 << 30, received: 1_000_000)?.code == .responseTooLarge)
    }

    @Test func theSmallerSizeLimitWins() {
        var options = TransferOptions()
        options.maximumResponseBodySize = 1000
        #expect(ResponseBodyLimits(options: options, destination: .memory).maximum == .init(bytes: 1000, inMemory: false))
        options.maximumResponseBodySize = 1 << 30
        #expect(ResponseBodyLimits(options: options, destination: .memory).maximum == .init(bytes: 64 << 20, inMemory: true))
        options.maximumInMemoryBodySize = nil
        #expect(ResponseBodyLimits(options: options, destination: .memory).maximum == .init(bytes: 1 << 30, inMemory: false))
        options.maximumResponseBodySize = nil
        #expect(ResponseBodyLimits(options: options, destination: .memory).maximum == nil)
    }

    @Test func sizeChecks() {
        var options = TransferOptions()
        options.maximumInMemoryBodySize = 100
        let limits = ResponseBodyLimits(options: options, destination: .memory)
        #expect(limits.checkAnnounced(length: 100) == nil)
        #expect(limits.checkAnnounced(length: 101)?.code == .responseTooLarge)
        #expect(limits.check(total: 100, received: nil) == nil)
        let error = limits.check(total: 101, received: nil)
        #expect(error?.code == .responseTooLarge)
        #expect(error?.message.contains("maximumInMemoryBodySize") == true)
    }

    @Test("the decompression ratio, past the allowance", arguments: [
        (Int64(1 << 20), Int64(1), false),          // within the allowance, however lopsided
        (Int64(1 << 20) + 1, Int64(10_000), true),   // 105:1
        (Int64(1 << 20) + 1, Int64(10_486), false),  // exactly 100:1 or less
        (Int64(1 << 30), Int64(1 << 24), false),     // 64:1
        (Int64(1 << 30), Int64(1_000_000), true),    // a bomb: 1,074:1
    ])
    func ratio(_ decoded: Int64, _ received: Int64, _ exceeded: Bool) {
        #expect(DecompressionLimit.ratio(100).isExceeded(decoded: decoded, received: received) == exceeded)
        #expect(!DecompressionLimit.none.isExceeded(decoded: decoded, received: received))
        var options = TransferOptions()
        options.maximumInMemoryBodySize = nil
        let limits = ResponseBodyLimits(options: options, destination: .memory)
        #expect((limits.check(total: decoded, received: received) != nil) == exceeded)
        #expect(limits.check(total: decoded, received: nil) == nil, "a body that is not decoded has no ratio")
    }
}
