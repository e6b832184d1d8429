import NIOConcurrencyHelpers

/// Which ``Route/holdUpload(key:)`` keys are released, and the requests waiting for theirs. Every
/// event-loop thread holds and resumes through it; ``TestServer/releaseUpload(_:)`` releases from any
/// thread.
final class UploadHolds: Sendable {
    private enum Hold {
        case released
        /// Resumes reading the body of each request held for the key.
        case waiting([@Sendable () -> Void])
    }

    private let holds = NIOLockedValueBox([String: Hold]())

    /// A request for `key` arrived: returns `true` when its body must wait, and then calls `resume`
    /// (on the releasing thread) once the key is released; `false` when the key is released already.
    func hold(_ key: String, resume: @escaping @Sendable () -> Void) -> Bool {
        self.holds.withLockedValue { holds in
            switch holds[key] {
            case .released:
                return false
            case .waiting(let waiting):
                holds[key] = .waiting(waiting + [resume])
                return true
            case nil:
                holds[key] = .waiting([resume])
                return true
            }
        }
    }

    /// Lets every request for `key`, waiting or to come, read its body.
    func release(_ key: String) {
        let waiting = self.holds.withLockedValue { holds -> [@Sendable () -> Void] in
            defer { holds[key] = .released }
            if case .waiting(let waiting) = holds[key] { return waiting }
            return []
        }
        for resume in waiting { resume() }
    }
}
