@testable import CurlewOperations
import Foundation
import Testing

/// What a serializer's value becomes as a `responseObject` (no I/O): an empty `Optional` is `nil`,
/// a full one is its value, anything else is itself.
@Suite("RequestOperation: response objects from serializer values")
struct ResponseObjectFlatteningTests {
    @Test("an empty Optional becomes nil")
    func emptyOptional() {
        #expect(flattened(Data?.none) == nil)
        #expect(flattened(Int??.none) == nil)
    }

    @Test("a full Optional becomes its value, not a boxed optional")
    func fullOptional() throws {
        let object = try #require(flattened(Data?.some(Data([1, 2, 3]))))
        #expect(object as? Data == Data([1, 2, 3]))
        #expect(type(of: object) == Data.self)
    }

    @Test("a value that is not an Optional is kept as it is")
    func plainValues() throws {
        let text = try #require(flattened("curlew"))
        #expect(text as? String == "curlew")
        let number = try #require(flattened(42))
        #expect(number as? Int == 42)
        let data = try #require(flattened(Data()))
        #expect(data as? Data == Data())
    }
}
