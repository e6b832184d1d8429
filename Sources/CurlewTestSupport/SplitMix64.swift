/// A small seeded random number generator (SplitMix64): the same seed draws the same numbers on
/// every run, so a test's random choices repeat and a failing seed can be replayed.
///
/// ```swift
/// var random = SplitMix64(seed: 0x5EED)
/// let index = random.next(upTo: 10)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// What each draw adds to the state (the golden ratio of 2⁶⁴).
    public static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    private var state: UInt64

    /// A generator whose first state is `seed`.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next number.
    public mutating func next() -> UInt64 {
        self.state &+= Self.increment
        var value = self.state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number in `0..<bound`.
    public mutating func next(upTo bound: Int) -> Int {
        Int(self.next() % UInt64(bound))
    }
}
