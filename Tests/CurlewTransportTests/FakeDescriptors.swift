@testable import CurlewTransport

/// The descriptor table of a fake process: numbers are handed out lowest-free-first, as the kernel
/// does, so a closed number comes back for the next socket.
final class FakeDescriptors {
    private var inodes: [Int32: UInt] = [:]
    private var nextInode: UInt = 1000

    /// A new socket.
    func socket() -> Int32 {
        self.nextInode += 1
        return self.allocate(self.nextInode)
    }

    func isOpen(_ descriptor: Int32) -> Bool { self.inodes[descriptor] != nil }

    /// A close the ledger does not hear about (curl closing its copy behind the engine's back).
    func closeBehindTheBack(_ descriptor: Int32) { self.inodes[descriptor] = nil }

    var system: SocketLedger.System {
        SocketLedger.System(
            inode: { self.inodes[$0] },
            duplicate: { descriptor in self.inodes[descriptor].map { self.allocate($0) } },
            close: { self.inodes[$0] = nil }
        )
    }

    private func allocate(_ inode: UInt) -> Int32 {
        var number: Int32 = 3
        while self.inodes[number] != nil { number += 1 }
        self.inodes[number] = inode
        return number
    }
}
