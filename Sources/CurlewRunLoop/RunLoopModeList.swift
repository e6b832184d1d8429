import Foundation
internal import CoreFoundation

/// A list of run-loop modes in the two shapes CoreFoundation wants, built once.
///
/// `CFRunLoopAddSource`/`AddTimer`/`AddObserver` take one mode name at a time and recognise the
/// common modes by the *identity* of the `kCFRunLoopCommonModes` constant, so `.common` and
/// `.default` map to CF's own constants, not to equal strings. `CFRunLoopPerformBlock` takes one
/// `CFTypeRef` for all modes: a `CFString` for one mode or a `CFArray` of them for several
/// (calling it once per mode would run the block once per mode).
struct RunLoopModeList {
    /// The modes as given (an empty list is replaced by `[.common]`).
    let modes: [RunLoop.Mode]
    /// One CF name per mode, for the add/remove calls.
    let names: [CFString]
    /// The `mode` argument of `CFRunLoopPerformBlock`: one string, or an array of them.
    let performArgument: CFTypeRef

    init(_ modes: [RunLoop.Mode]) {
        let modes = modes.isEmpty ? [RunLoop.Mode.common] : modes
        var names: [CFString] = []
        for mode in modes {
            let name = Self.cfName(mode)
            if !names.contains(where: { CFEqual($0, name) }) { names.append(name) }
        }
        self.modes = modes
        self.names = names
        self.performArgument = Self.performArgument(names)
    }

    /// The CF name of `mode`; the common-modes and default-mode constants for those two.
    static func cfName(_ mode: RunLoop.Mode) -> CFString {
        if mode == .common { return kCFRunLoopCommonModes }
        if mode == .default { return kCFRunLoopDefaultMode }
        return CFStringCreateWithCString(kCFAllocatorDefault, mode.rawValue, CFStringBuiltInEncodings.UTF8.rawValue)
            ?? kCFRunLoopDefaultMode
    }

    private static func performArgument(_ names: [CFString]) -> CFTypeRef {
        if names.count == 1, let only = names.first { return only }
        var values: [UnsafeRawPointer?] = names.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
        let array = values.withUnsafeMutableBufferPointer { buffer in
            withUnsafePointer(to: kCFTypeArrayCallBacks) { callBacks in
                CFArrayCreate(kCFAllocatorDefault, buffer.baseAddress, buffer.count, callBacks)
            }
        }
        // CFArrayCreate only fails when memory runs out; fall back to the common modes then.
        return array ?? kCFRunLoopCommonModes
    }
}

/// Context `retain`/`release` callbacks for CF objects whose `info` is a Swift object passed with
/// `Unmanaged.passUnretained(_:)`: CF then owns one reference for as long as it holds the pointer,
/// so a callout can never see a freed object (CF calls these at create/destroy time; CFSocket also
/// around each callout).
enum CFContextRetain {
    static let retain: @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer? = { info in
        if let info { _ = Unmanaged<AnyObject>.fromOpaque(info).retain() }
        return info
    }

    static let release: @convention(c) (UnsafeRawPointer?) -> Void = { info in
        if let info { Unmanaged<AnyObject>.fromOpaque(info).release() }
    }
}
