import Foundation
import Synchronization

/// Per-TLS-connection state: which provider token the connection uses, to answer 429
/// `TooManyProviderTokenUpdates` when it changes tokens more than once in 20 minutes (docs/apns.md §2).
final class SimulatorConnection: Sendable {
    let id: Int
    let httpVersion: String
    private let token = Mutex<(current: String?, lastChange: Date?)>((nil, nil))

    init(id: Int, httpVersion: String) {
        self.id = id
        self.httpVersion = httpVersion
    }

    /// Records `fingerprint` as the connection's token; false when that would be a second change within 20 minutes.
    func adopt(_ fingerprint: String, now: Date) -> Bool {
        token.withLock { state in
            guard let current = state.current else {
                state.current = fingerprint
                return true
            }
            if current == fingerprint { return true }
            if let last = state.lastChange, now.timeIntervalSince(last) < 20 * 60 { return false }
            state = (fingerprint, now)
            return true
        }
    }
}
