import Testing

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
