import NIOCore

extension TestServer {
    /// The FNV-1a 64-bit hash of `bytes`: what `.echo` reports as `bodyChecksum` (as ``FNV1a64/hexString``).
    ///
    /// Clients compare it with the checksum of what they uploaded instead of echoing megabytes back.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hasher = FNV1a64()
        hasher.update(bytes)
        return hasher.value
    }
}

/// Incremental FNV-1a, 64-bit: feed pieces with ``update(_:)-(Sequence<UInt8>)`` and read ``value``.
///
/// Hashing pieces gives the same value as hashing their concatenation, so a 16 MiB upload is checked
/// as it streams.
public struct FNV1a64: Sendable, Hashable {
    /// The FNV-1a 64-bit offset basis: the hash of no bytes.
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The FNV 64-bit prime.
    public static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The hash of every byte fed so far.
    public private(set) var value: UInt64 = FNV1a64.offsetBasis

    /// Starts a hash of no bytes.
    public init() {}

    /// Feeds `bytes` into the hash.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            self.update(UnsafeRawBufferPointer(buffer))
        }
        if handled == nil {
            var hash = self.value
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* FNV1a64.prime
            }
            self.value = hash
        }
    }

    /// Feeds the bytes of `buffer` into the hash.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        var hash = self.value
        for byte in buffer {
            hash = (hash ^ UInt64(byte)) &* FNV1a64.prime
        }
        self.value = hash
    }

    /// Feeds the readable bytes of `buffer` into the hash, without consuming them.
    mutating func update(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { self.update($0) }
    }

    /// ``value`` as 16 lowercase hexadecimal digits, the form `.echo` uses.
    public var hexString: String {
        FNV1a64.hex(self.value)
    }

    /// `value` as 16 lowercase hexadecimal digits.
    public static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}
