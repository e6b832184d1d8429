import NIOCore

extension TestServer {
    /// The deterministic content every body-producing route sends: byte `i` of a resource is
    /// `UInt8((i + offset) % 251)`.
    ///
    /// 251 is prime, so the pattern never lines up with power-of-two buffer sizes and a misplaced
    /// slice is detected. `.bytes(n)` and `.entity(bytes: n)` (version 1) send `expectedBody(count: n)`;
    /// a `Range: bytes=a-b` answer is `expectedBody(count: b - a + 1, offset: a)`; entity version `v`
    /// shifts the content by `v - 1`.
    ///
    /// - Parameters:
    ///   - count: Number of bytes; 0 or less gives an empty array.
    ///   - offset: Position of the first byte within the resource (any integer; it is taken modulo 251).
    public static func expectedBody(count: Int, offset: Int = 0) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        var value = BodyPattern.normalized(offset)
        for _ in 0..<count {
            bytes.append(UInt8(truncatingIfNeeded: value))
            value += 1
            if value == BodyPattern.period { value = 0 }
        }
        return bytes
    }
}

/// The pre-built bytes behind every deterministic body, shared by all connections.
///
/// One buffer holds the pattern from phase 0 for ``maxSliceLength`` + one period bytes, so a body piece
/// of up to ``maxSliceLength`` bytes starting at any phase is a zero-copy slice of it.
enum BodyPattern {
    static let period = 251
    /// Longest piece served as a slice (about 256 KiB, a whole number of periods).
    static let maxSliceLength = 251 * 1_045

    static let storage: ByteBuffer = {
        let total = maxSliceLength + period
        var buffer = ByteBufferAllocator().buffer(capacity: total)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: total) { raw in
            for index in 0..<total {
                raw[index] = UInt8(truncatingIfNeeded: index % period)
            }
            return total
        }
        return buffer
    }()

    /// `offset` reduced into `0..<period`, also for negative offsets.
    static func normalized(_ offset: Int) -> Int {
        let remainder = offset % period
        return remainder < 0 ? remainder + period : remainder
    }

    /// `length` bytes of the pattern starting at resource position `offset`.
    ///
    /// Pieces up to ``maxSliceLength`` share the pre-built storage; longer ones are assembled.
    static func buffer(offset: Int, length: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard length > 0 else { return allocator.buffer(capacity: 0) }
        if length <= maxSliceLength,
            let slice = storage.getSlice(at: storage.readerIndex + normalized(offset), length: length)
        {
            return slice
        }
        var assembled = allocator.buffer(capacity: length)
        var position = offset
        var remaining = length
        while remaining > 0 {
            let piece = min(remaining, maxSliceLength)
            guard var slice = storage.getSlice(at: storage.readerIndex + normalized(position), length: piece) else {
                break
            }
            assembled.writeBuffer(&slice)
            position += piece
            remaining -= piece
        }
        return assembled
    }
}
