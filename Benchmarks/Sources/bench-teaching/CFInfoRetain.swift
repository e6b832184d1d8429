import CoreFoundation

/// `retain`/`release` callbacks for a CF context whose `info` is a Swift object passed unretained:
/// CF then holds its own reference for as long as it keeps the pointer.
enum CFInfoRetain {
    static let retain: @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer? = { info in
        if let info { _ = Unmanaged<AnyObject>.fromOpaque(info).retain() }
        return info
    }

    static let release: @convention(c) (UnsafeRawPointer?) -> Void = { info in
        if let info { Unmanaged<AnyObject>.fromOpaque(info).release() }
    }
}
