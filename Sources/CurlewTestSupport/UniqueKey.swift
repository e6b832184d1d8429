import Foundation

/// A key for the test server's per-key routes and counters (`Route.flaky(key:…)`,
/// `requests(forKey:)`) that no other test uses: `name`, the backend and a random suffix, so runs
/// on several backends at once, or again in the same process, never count each other's requests.
public func uniqueKey(_ name: String, _ backend: BackendConfiguration) -> String {
    "\(name)-\(backend.rawValue)-\(UUID().uuidString.prefix(8))"
}
