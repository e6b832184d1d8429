import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Descriptors whose close was requested while libdispatch may still hold state for them.
///
/// libdispatch keys its epoll bookkeeping by descriptor number and updates it later on its manager
/// thread. Closing a descriptor before every source on it ran its cancel handler lets the kernel hand
/// the same number to a new socket while the old bookkeeping is alive, and the new socket's source
/// then never fires (swift-corelibs-libdispatch #833). So a socket is closed by the cancel handler of
/// its last source, and this ledger counts the sources still to report per descriptor.
///
/// Every pending close holds the `group` entered, so a shutdown can wait for all of them without
/// blocking the queue. Confined to the scheduler's queue: the cancel handlers run there too.
final class DeferredCloses {
    /// Entered once per pending close, left when that descriptor is closed.
    let group = DispatchGroup()
    private var remainingSources: [Int32: Int] = [:]

    /// How many descriptors wait for their sources' cancel handlers.
    var count: Int { self.remainingSources.count }

    /// Whether a close of `socket` is pending.
    func isPending(_ socket: Int32) -> Bool {
        self.remainingSources[socket] != nil
    }

    /// Records that `socket` is to be closed after `sources` cancel handlers ran for it; with no
    /// sources it is closed at once.
    func closeAfterCancellation(of sources: Int, socket: Int32) {
        guard sources > 0 else {
            Self.closeDescriptor(socket)
            return
        }
        precondition(self.remainingSources[socket] == nil, "close of socket \(socket) requested twice")
        self.remainingSources[socket] = sources
        self.group.enter()
    }

    /// Called by each source's cancel handler; the last one for a descriptor closes it.
    func sourceDidCancel(socket: Int32) {
        guard let remaining = self.remainingSources[socket] else {
            // A source cancelled without a recorded close (its scheduler was dropped without a
            // shutdown and lost track of it): not ours to close.
            return
        }
        if remaining > 1 {
            self.remainingSources[socket] = remaining - 1
            return
        }
        self.remainingSources[socket] = nil
        Self.closeDescriptor(socket)
        self.group.leave()
    }

    /// Closes `socket`. `close` is not retried on `EINTR`: on Linux the descriptor is released
    /// even then, and a retry could close a number already reused by another thread.
    static func closeDescriptor(_ socket: Int32) {
        _ = close(socket)
    }
}
