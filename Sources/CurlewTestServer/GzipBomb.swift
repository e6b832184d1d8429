/// Decompression bombs for ``FaultRoute/gzipBomb`` and ``FaultRoute/doubleGzipBomb``, built
/// deterministically in memory (nothing large is stored in the repository).
///
/// The single bomb is one DEFLATE block with a hand-made dynamic Huffman code in which "a match of
/// 258 bytes at distance 1" is one bit and "distance 1" is one bit: after a literal zero, every zero
/// *byte* of the block is four such matches, 1,032 bytes of output. So the compressed body is a short
/// header, about a megabyte of zero bytes and an end-of-block code, and it inflates to
/// 1 + 258 × 4,161,790 = 1,073,741,821 zero bytes (1 GiB less 3) — DEFLATE's ceiling of about
/// 1,032:1. The double bomb gzips that bomb again with DEFLATE's fixed Huffman code (a 258-byte
/// match at distance 1 costs 13 bits), so its zero run collapses too.
///
/// Both are valid gzip: each member's CRC-32 and length are right (the CRC of a billion zeros is
/// computed in GF(2), not by running over them).
enum GzipBomb {
    /// How many 258-byte matches the single bomb holds.
    static let matchCount = 4_161_790
    /// The single bomb's inflated size: a literal zero, then the matches.
    static let inflatedSize = 1 + 258 * matchCount

    /// About 1 MB of gzip inflating to ``inflatedSize`` zero bytes.
    static let single: [UInt8] = {
        var writer = BitWriter()
        writer.write(1, count: 1)  // BFINAL
        writer.write(2, count: 2)  // BTYPE: dynamic Huffman
        writer.write(286 - 257, count: 5)  // HLIT: literal/length codes 0...285
        writer.write(1 - 1, count: 5)  // HDIST: one distance code
        // Code-length code lengths in their transmission order; used: 18 (one bit), 1 and 2 (two bits).
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        let codeLengthLengths: [Int: UInt32] = [18: 1, 1: 2, 2: 2]
        writer.write(18 - 4, count: 4)  // HCLEN: the first 18 entries of `order` (up to symbol 1)
        for symbol in order.prefix(18) { writer.write(codeLengthLengths[symbol] ?? 0, count: 3) }
        // Canonical code-length codes: 18 → 0, 1 → 10, 2 → 11.
        let lengthTwo = { (writer: inout BitWriter) in writer.writeHuffman(0b11, count: 2) }
        let lengthOne = { (writer: inout BitWriter) in writer.writeHuffman(0b10, count: 2) }
        let zeros = { (writer: inout BitWriter, run: UInt32) in
            writer.writeHuffman(0, count: 1)
            writer.write(run - 11, count: 7)
        }
        lengthTwo(&writer)  // literal 0
        zeros(&writer, 138)  // literals 1...138
        zeros(&writer, 117)  // literals 139...255
        lengthTwo(&writer)  // 256: end of block
        zeros(&writer, 28)  // 257...284
        lengthOne(&writer)  // 285: length 258
        lengthOne(&writer)  // distance code 0: distance 1
        // Canonical literal/length code: 285 → 0, literal 0 → 10, end of block → 11; distance 0 → 0.
        writer.writeHuffman(0b10, count: 2)
        writer.writeZeroBits(2 * matchCount)
        writer.writeHuffman(0b11, count: 2)
        let deflate = writer.finish()
        return gzip(deflate: deflate, crc: CRC32.ofZeros(count: inflatedSize), size: inflatedSize)
    }()

    /// ``single``, gzipped again: a few kilobytes, served as `Content-Encoding: gzip, gzip`.
    static let double: [UInt8] = {
        let inner = single
        var writer = BitWriter()
        writer.write(1, count: 1)  // BFINAL
        writer.write(1, count: 2)  // BTYPE: fixed Huffman
        var index = 0
        while index < inner.count {
            var run = 0
            while index + run < inner.count && inner[index + run] == 0 { run += 1 }
            if run > 258 {
                writeFixedLiteral(0, to: &writer)
                var left = run - 1
                while left >= 258 {
                    writer.writeHuffman(0xC5, count: 8)  // 285: length 258
                    writer.writeHuffman(0, count: 5)  // distance code 0: distance 1
                    left -= 258
                }
                for _ in 0..<left { writeFixedLiteral(0, to: &writer) }
                index += run
            } else {
                writeFixedLiteral(inner[index], to: &writer)
                index += 1
            }
        }
        writer.writeHuffman(0, count: 7)  // end of block
        return gzip(deflate: writer.finish(), crc: CRC32.of(inner), size: inner.count)
    }()

    private static func writeFixedLiteral(_ byte: UInt8, to writer: inout BitWriter) {
        if byte < 144 {
            writer.writeHuffman(0x30 + UInt32(byte), count: 8)
        } else {
            writer.writeHuffman(0x190 + UInt32(byte) - 144, count: 9)
        }
    }

    /// A gzip member (RFC 1952) around a DEFLATE stream.
    private static func gzip(deflate: [UInt8], crc: UInt32, size: Int) -> [UInt8] {
        let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        let isize = UInt32(truncatingIfNeeded: size)
        let trailer = [crc, isize].flatMap { value in (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return header + deflate + trailer
    }
}

/// DEFLATE's bit order: values least significant bit first, Huffman codes most significant first.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var pending: UInt32 = 0
    private var pendingCount = 0

    /// Appends the low `count` bits of `value`, least significant first.
    mutating func write(_ value: UInt32, count: Int) {
        for bit in 0..<count { self.append(bit: (value >> bit) & 1) }
    }

    /// Appends a Huffman code of `count` bits, most significant first.
    mutating func writeHuffman(_ code: UInt32, count: Int) {
        for bit in stride(from: count - 1, through: 0, by: -1) { self.append(bit: (code >> bit) & 1) }
    }

    /// Appends `count` zero bits, whole bytes at once.
    mutating func writeZeroBits(_ count: Int) {
        var left = count
        while left > 0 && self.pendingCount != 0 {
            self.append(bit: 0)
            left -= 1
        }
        self.bytes.append(contentsOf: repeatElement(0, count: left / 8))
        for _ in 0..<(left % 8) { self.append(bit: 0) }
    }

    /// The bytes, the last one padded with zero bits.
    mutating func finish() -> [UInt8] {
        if self.pendingCount > 0 {
            self.bytes.append(UInt8(self.pending))
            self.pending = 0
            self.pendingCount = 0
        }
        return self.bytes
    }

    private mutating func append(bit: UInt32) {
        self.pending |= bit << self.pendingCount
        self.pendingCount += 1
        if self.pendingCount == 8 {
            self.bytes.append(UInt8(self.pending))
            self.pending = 0
            self.pendingCount = 0
        }
    }
}

/// CRC-32 (IEEE, as gzip uses it), including that of a long run of zeros without running over it.
enum CRC32 {
    private static let polynomial: UInt32 = 0xEDB8_8320

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ polynomial : value >> 1 }
        return value
    }

    static func of(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    /// The CRC of `count` zero bytes: zeros only shift the register, so it is the initial register
    /// times x^(8 × count) modulo the polynomial (reflected), computed by squaring.
    static func ofZeros(count: Int) -> UInt32 {
        var power: UInt32 = 1 << 30  // x^1
        var result: UInt32 = 1 << 31  // x^0
        var exponent = UInt64(count) * 8
        while exponent > 0 {
            if exponent & 1 == 1 { result = multiply(power, result) }
            power = multiply(power, power)
            exponent >>= 1
        }
        return multiply(result, 0xFFFF_FFFF) ^ 0xFFFF_FFFF
    }

    /// a × b modulo the polynomial, both reflected.
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var mask: UInt32 = 1 << 31
        var product: UInt32 = 0
        var b = b
        while mask != 0 {
            if a & mask != 0 { product ^= b }
            mask >>= 1
            b = b & 1 == 1 ? (b >> 1) ^ polynomial : b >> 1
        }
        return product
    }
}
