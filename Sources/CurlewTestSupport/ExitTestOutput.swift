import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Prints what an exit test's child process wrote to its standard error, such as the figures it
/// measured. Swift Testing keeps that output only when asked to observe it, and `#expect` returns
/// it only when the child exited as expected (`nil` otherwise).
///
/// ```swift
/// let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { … }
/// printStandardError(of: result)
/// ```
public func printStandardError(of result: ExitTest.Result?) {
    guard let result, !result.standardErrorContent.isEmpty else { return }
    print(String(decoding: result.standardErrorContent, as: UTF8.self), terminator: "")
}

/// Ends an exit test's child process with a failure: writes `message` to its standard error, after
/// the name of the calling file (`FaultMatrixTests: no test server`), and exits with status 1, which
/// the parent's `#expect(processExitsWith: .success, …)` reports with that output.
public func failChildProcess(_ message: String, fileID: String = #fileID) -> Never {
    let file = fileID.split(separator: "/").last.map { String($0.prefix { $0 != "." }) } ?? fileID
    FileHandle.standardError.write(Data("\(file): \(message)\n".utf8))
    exit(1)
}
