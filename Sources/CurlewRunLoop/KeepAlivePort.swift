import Foundation
internal import CoreFoundation
internal import Glibc
internal import CCurlewLinux

/// The input source that keeps a network thread's run loop alive without opening a network socket.
///
/// A run loop whose mode has no source, timer or block returns from `CFRunLoopRunInMode` at once,
/// so a thread that only "runs its run loop" would spin or exit. AFNetworking kept its thread's loop
/// alive with `[runLoop addPort:[NSMachPort port] forMode:...]`. On Linux `NSMachPort` does not exist,
/// `Port()` traps, and `SocketPort()` *listens on TCP 0.0.0.0* (reachable from the network) and
/// starts CF's socket-manager thread. What CF calls a port on Linux is just a file descriptor its
/// epoll set waits on, so this source is a version-1 `CFRunLoopSource` whose port is an `eventfd`
/// that nobody ever writes: the descriptor is not a socket, never becomes readable, never wakes the
/// loop, and needs no helper thread.
final class KeepAlivePort {
    /// The never-signalled eventfd (never closed: the loop it keeps alive lives forever).
    let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Creates the eventfd and a version-1 source over it, or returns `nil` if the process is out
    /// of descriptors or memory.
    static func make() -> (source: CFRunLoopSource, descriptor: Int32)? {
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        let port = KeepAlivePort(descriptor: descriptor)

        var context = CFRunLoopSourceContext1()
        context.version = 1
        context.info = Unmanaged.passUnretained(port).toOpaque()
        context.retain = CFContextRetain.retain
        context.release = CFContextRetain.release
        context.getPort = { info in
            guard let info else { return -1 }
            return Unmanaged<KeepAlivePort>.fromOpaque(info).takeUnretainedValue().descriptor
        }
        context.perform = { _ in }  // never signalled: nothing ever writes the eventfd
        let source = withUnsafeMutablePointer(to: &context) { pointer in
            // CF reads a version-1 context through the version-0 pointer type, by `version`.
            CFRunLoopSourceCreate(kCFAllocatorDefault, 0, UnsafeMutablePointer(OpaquePointer(pointer)))
        }
        guard let source else {
            Glibc.close(descriptor)
            return nil
        }
        return (source, descriptor)
    }
}
