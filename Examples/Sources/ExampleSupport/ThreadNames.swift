#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Names for the threads an example sees, read from Linux's `/proc/thread-self`.
///
/// A thread someone named (`Curlew.network`, a `Thread` with a `name`) is shown by its kernel name;
/// the main thread is `main`; a libdispatch pool thread (which libdispatch names after its root
/// queue, `…-qos.overcommit`) or an unnamed thread is `pool thread #n`, numbered in the order the
/// example first met it, so the same thread always gets the same label.
public enum ThreadNames {
    private static let numbers = Shared<[Int32: Int]>([:])
    private static let processName = ThreadNames.kernelName(of: getpid()) ?? ""

    /// The kernel id of the calling thread.
    public static func currentID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return -1 }
        // The link reads "PID/task/TID".
        let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.flatMap { Int32($0) } ?? -1
    }

    /// The label of the calling thread.
    public static func current() -> String {
        self.label(of: self.currentID())
    }

    /// The label of thread `id`.
    public static func label(of id: Int32) -> String {
        if id == getpid() { return "main" }
        if let name = self.kernelName(of: id), name != self.processName, !name.isEmpty, !name.contains("qos") { return name }
        let number = self.numbers.withLock { numbers -> Int in
            if let known = numbers[id] { return known }
            let next = numbers.count + 1
            numbers[id] = next
            return next
        }
        return "pool thread #\(number)"
    }

    /// The kernel names of the process's threads, as `/proc/self/task/*/comm` lists them.
    public static func all() -> [String] {
        self.threadIDs().compactMap { self.kernelName(of: $0) }
    }

    /// How many threads the process has now.
    public static func count() -> Int {
        self.threadIDs().count
    }

    /// The process's resident memory now, in MiB (`VmRSS`).
    public static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kilobytes / 1024
    }

    private static func threadIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { Int32($0) }
    }

    private static func kernelName(of id: Int32) -> String? {
        guard let name = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8) else { return nil }
        return name.hasSuffix("\n") ? String(name.dropLast()) : name
    }
}
