/// Measures what a binary property list (`bplist00`) becomes once decoded, before Foundation
/// decodes it.
///
/// A binary property list is a table of objects that refer to each other by index, so one array
/// can be referenced many times: 13 arrays that each reference the next one 16 times fit in a few
/// hundred bytes and describe 16¹³ values, and Foundation builds every one of them (a copy per
/// reference). This scanner reads the trailer, the offset table and the objects' headers with
/// every offset and count checked, and computes the **expanded** size over the graph of references
/// with memoization: each object is read once, each reference added once, so the work is linear in
/// the references read. It stops as soon as the count passes a limit, and refuses cycles.
///
/// It follows the format as Core Foundation reads it (`CFBinaryPList.c`) and is stricter where
/// that is simpler (integer and reference sizes of 1 to 8 bytes only) or safer (no sets, which a
/// property list cannot hold and Foundation crashes on); a body it accepts
/// describes at most ``Expansion/nodes`` values holding ``Expansion/bytes`` bytes of strings and
/// data. No recursion: the walk keeps its own stack.
struct BinaryPropertyListScanner {
    /// What a property list becomes once decoded.
    struct Expansion: Equatable {
        /// Values, each counted once per reference (dictionary keys included).
        var nodes: Int
        /// Bytes of strings (as stored: one per ASCII character, two per UTF-16 unit) and data,
        /// counted once per reference.
        var bytes: Int
    }

    /// Why a body is refused.
    enum Failure: Error, Equatable {
        /// The body is not a well-formed binary property list.
        case malformed(String)
        /// It expands to more values than the node limit.
        case tooManyNodes
        /// It expands to more bytes of strings and data than the byte limit.
        case tooLarge
    }

    /// The most values accepted, counted once per reference.
    let maximumNodeCount: Int
    /// The most bytes of strings and data accepted, counted once per reference.
    let maximumByteCount: Int

    /// The expansion of `bytes`, a whole binary property list.
    func expansion(of bytes: UnsafeRawBufferPointer) throws(Failure) -> Expansion {
        let table = try ObjectTable(bytes)
        var walk = Walk(table: table, scanner: self)
        return try walk.run()
    }

    // MARK: The object table

    /// The trailer's facts, checked against the body.
    private struct ObjectTable {
        let bytes: UnsafeRawBufferPointer
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTableStart: Int

        static let headers = [Array("bplist00".utf8), Array("bplist01".utf8)]
        static let trailerSize = 32

        init(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
            self.bytes = bytes
            guard bytes.count >= 8 + 1 + Self.trailerSize else { throw .malformed("The body is too short for a binary property list.") }
            guard Self.headers.contains(where: { bytes.hasBytes($0, at: 0) }) else { throw .malformed("The header is not bplist00.") }
            let trailer = bytes.count - Self.trailerSize
            self.offsetSize = Int(bytes[trailer + 6])
            self.referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(self.offsetSize), (1...8).contains(self.referenceSize) else {
                throw .malformed("Offsets and references must take 1 to 8 bytes.")
            }
            guard let objectCount = Self.count(bytes, at: trailer + 8), let topObject = Self.count(bytes, at: trailer + 16),
                  let offsetTableStart = Self.count(bytes, at: trailer + 24) else {
                throw .malformed("A count in the trailer is out of range.")
            }
            guard objectCount >= 1, topObject < objectCount else { throw .malformed("The top object is not in the table.") }
            // The offset table runs from its start to the trailer exactly, after at least one byte of objects.
            let (tableSize, overflow) = objectCount.multipliedReportingOverflow(by: self.offsetSize)
            guard !overflow, offsetTableStart >= 9, offsetTableStart <= trailer, tableSize == trailer - offsetTableStart else {
                throw .malformed("The offset table does not fit between the objects and the trailer.")
            }
            guard self.referenceSize == 8 || objectCount < 1 << (8 * self.referenceSize),
                  self.offsetSize == 8 || offsetTableStart < 1 << (8 * self.offsetSize) else {
                throw .malformed("References or offsets are too narrow for the table.")
            }
            self.objectCount = objectCount
            self.topObject = topObject
            self.offsetTableStart = offsetTableStart
        }

        /// A big-endian 8-byte count, if it fits `Int`.
        private static func count(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
            let value = Self.integer(bytes, at: index, size: 8)
            return value <= UInt64(Int.max) ? Int(value) : nil
        }

        /// A big-endian unsigned integer of `size` (1 to 8) bytes at `index`, which the caller checked.
        static func integer(_ bytes: UnsafeRawBufferPointer, at index: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in bytes[index..<index + size] {
                value = value << 8 | UInt64(byte)
            }
            return value
        }

        /// Where object `index` starts; it must lie after the header and before the offset table.
        func offset(ofObject index: Int) throws(Failure) -> Int {
            guard index < self.objectCount else { throw .malformed("A reference points past the object table.") }
            let offset = Self.integer(self.bytes, at: self.offsetTableStart + index * self.offsetSize, size: self.offsetSize)
            guard offset >= 8, offset < UInt64(self.offsetTableStart) else { throw .malformed("An object offset points outside the objects.") }
            return Int(offset)
        }

        /// The object index that the reference at `index` names.
        func reference(at index: Int) -> Int {
            // At most 8 bytes wide, and the table's count fits Int; a larger value fails `offset(ofObject:)`.
            Int(clamping: Self.integer(self.bytes, at: index, size: self.referenceSize))
        }

        /// What one object is: its payload bytes and, for a collection, where its references are.
        func object(at offset: Int) throws(Failure) -> Object {
            let end = self.offsetTableStart
            let marker = self.bytes[offset]
            let low = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0:
                guard marker == 0x00 || marker == 0x08 || marker == 0x09 else { throw .malformed("Unknown marker \(marker).") }
                return Object(payload: 0, references: nil)
            case 0x1:
                guard low <= 4 else { throw .malformed("An integer wider than 16 bytes.") }
                try Self.require(offset + 1, 1 << low, within: end)
                return Object(payload: 0, references: nil)
            case 0x2:
                guard low == 2 || low == 3 else { throw .malformed("A real of an unknown width.") }
                try Self.require(offset + 1, 1 << low, within: end)
                return Object(payload: 0, references: nil)
            case 0x3:
                guard marker == 0x33 else { throw .malformed("Unknown marker \(marker).") }
                try Self.require(offset + 1, 8, within: end)
                return Object(payload: 0, references: nil)
            case 0x4, 0x5:
                let (count, start) = try self.count(low, after: offset)
                try Self.require(start, count, within: end)
                return Object(payload: count, references: nil)
            case 0x6:
                let (count, start) = try self.count(low, after: offset)
                let (size, overflow) = count.multipliedReportingOverflow(by: 2)
                guard !overflow else { throw .malformed("A string longer than memory.") }
                try Self.require(start, size, within: end)
                return Object(payload: size, references: nil)
            case 0x8:
                try Self.require(offset + 1, low + 1, within: end)
                return Object(payload: 0, references: nil)
            case 0xC:
                // Not a property-list type, and PropertyListSerialization on Linux crashes bridging one
                // (a set holding "x": 45 bytes).
                throw .malformed("Sets are refused.")
            case 0xA, 0xD:
                let (count, start) = try self.count(low, after: offset)
                let (references, overflow) = count.multipliedReportingOverflow(by: marker >> 4 == 0xD ? 2 : 1)
                let (size, overflow2) = references.multipliedReportingOverflow(by: self.referenceSize)
                guard !overflow, !overflow2 else { throw .malformed("A collection longer than memory.") }
                try Self.require(start, size, within: end)
                return Object(payload: 0, references: References(start: start, count: references))
            default:
                throw .malformed("Unknown marker \(marker).")
            }
        }

        /// The count of a data, string or collection object: the marker's low nibble, or when that
        /// is 15 an integer object (1, 2, 4 or 8 bytes) after the marker. Returns where the
        /// contents start.
        private func count(_ low: Int, after offset: Int) throws(Failure) -> (count: Int, start: Int) {
            guard low == 0x0F else { return (low, offset + 1) }
            let end = self.offsetTableStart
            try Self.require(offset + 1, 1, within: end)
            let marker = self.bytes[offset + 1]
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw .malformed("A count that is not an integer of 1 to 8 bytes.") }
            let size = 1 << Int(marker & 0x0F)
            try Self.require(offset + 2, size, within: end)
            let value = Self.integer(self.bytes, at: offset + 2, size: size)
            guard value <= UInt64(Int.max) else { throw .malformed("A negative count.") }
            return (Int(value), offset + 2 + size)
        }

        /// Checks that `size` bytes from `start` end at or before `end`, without overflow.
        private static func require(_ start: Int, _ size: Int, within end: Int) throws(Failure) {
            guard start <= end, size <= end - start else { throw .malformed("An object runs into the offset table.") }
        }
    }

    /// Where a collection's references are.
    private struct References {
        let start: Int
        let count: Int
    }

    private struct Object {
        let payload: Int
        let references: References?
    }

    // MARK: The walk

    /// A depth-first walk from the top object with an explicit stack; each object's expansion is
    /// kept (by offset, as Core Foundation identifies objects) once its references are done.
    private struct Walk {
        struct Frame {
            let offset: Int
            let references: References
            var next = 0
            var total: Expansion
        }

        let table: ObjectTable
        let scanner: BinaryPropertyListScanner
        var known: [Int: Expansion] = [:]
        var open: Set<Int> = []
        var stack: [Frame] = []
        /// References followed. Each belongs to an object reached at least once, and adds at least
        /// one value under it, so more references than the node limit means more values too.
        var referencesRead = 0

        init(table: ObjectTable, scanner: BinaryPropertyListScanner) {
            self.table = table
            self.scanner = scanner
        }

        mutating func run() throws(Failure) -> Expansion {
            let top = try self.table.offset(ofObject: self.table.topObject)
            if let expansion = try self.enter(top) {
                return expansion
            }
            while let last = self.stack.indices.last {
                let frame = self.stack[last]
                if frame.next < frame.references.count {
                    self.stack[last].next += 1
                    self.referencesRead += 1
                    guard self.referencesRead <= self.scanner.maximumNodeCount else { throw .tooManyNodes }
                    let index = self.table.reference(at: frame.references.start + frame.next * self.table.referenceSize)
                    let offset = try self.table.offset(ofObject: index)
                    if let expansion = try self.enter(offset) {
                        try self.add(expansion, toFrame: last)
                    }
                } else {
                    self.stack.removeLast()
                    self.open.remove(frame.offset)
                    self.known[frame.offset] = frame.total
                    guard let parent = self.stack.indices.last else { return frame.total }
                    try self.add(frame.total, toFrame: parent)
                }
            }
            throw .malformed("The walk ended without the top object.")
        }

        /// The expansion of the object at `offset` when it is known or has no references;
        /// otherwise pushes it and returns `nil`.
        mutating func enter(_ offset: Int) throws(Failure) -> Expansion? {
            if let expansion = self.known[offset] {
                return expansion
            }
            guard !self.open.contains(offset) else { throw .malformed("An object contains itself.") }
            guard self.scanner.maximumNodeCount >= 1 else { throw .tooManyNodes }
            let object = try self.table.object(at: offset)
            let own = Expansion(nodes: 1, bytes: object.payload)
            guard own.bytes <= self.scanner.maximumByteCount else { throw .tooLarge }
            guard let references = object.references, references.count > 0 else {
                self.known[offset] = own
                return own
            }
            self.open.insert(offset)
            self.stack.append(Frame(offset: offset, references: references, total: own))
            return nil
        }

        /// Adds a child's expansion to a frame's, within the limits.
        mutating func add(_ expansion: Expansion, toFrame index: Int) throws(Failure) {
            let total = self.stack[index].total
            let (nodes, nodesOverflow) = total.nodes.addingReportingOverflow(expansion.nodes)
            guard !nodesOverflow, nodes <= self.scanner.maximumNodeCount else { throw .tooManyNodes }
            let (bytes, bytesOverflow) = total.bytes.addingReportingOverflow(expansion.bytes)
            guard !bytesOverflow, bytes <= self.scanner.maximumByteCount else { throw .tooLarge }
            self.stack[index].total = Expansion(nodes: nodes, bytes: bytes)
        }
    }
}
