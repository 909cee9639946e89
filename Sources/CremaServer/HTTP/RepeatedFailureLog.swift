import CremaClock
import Foundation
import Synchronization

/// At most one log line per `interval` for a failure that every request repeats (the database down): the first at
/// once, then one per interval that counts the requests left out. Without it an outage wrote a line per failed
/// request, 40 a second with four retrying clients and thousands under real traffic (docs/reliability.md).
struct RepeatedFailureLog: Sendable {
    /// What to do with one more occurrence.
    enum Decision: Equatable, Sendable {
        /// The first failure of an outage: after a quiet `interval`, or the first ever. `unloggedBefore` failures of
        /// the previous outage came after its last line.
        case started(unloggedBefore: Int)
        /// A line for an outage still going on; `omitted` failures since its previous line were not written.
        case continuing(omitted: Int)
        case omit
    }

    let interval: TimeInterval
    private var lastLine: Date?
    private var lastOccurrence: Date?
    private var omitted = 0

    init(interval: TimeInterval) {
        self.interval = interval
    }

    /// A clock that went backwards starts a new outage rather than silencing the failure.
    mutating func occurred(at now: Date) -> Decision {
        defer { lastOccurrence = now }
        guard let lastLine, let lastOccurrence, now >= lastOccurrence, now.timeIntervalSince(lastOccurrence) < interval else {
            return line(.started(unloggedBefore: omitted), at: now)
        }
        if now.timeIntervalSince(lastLine) >= interval { return line(.continuing(omitted: omitted), at: now) }
        omitted += 1
        return .omit
    }

    private mutating func line(_ decision: Decision, at now: Date) -> Decision {
        lastLine = now
        omitted = 0
        return decision
    }
}

/// A `RepeatedFailureLog` shared by every request, read on the service's clock.
final class SharedFailureLog: Sendable {
    private let state: Mutex<RepeatedFailureLog>
    private let clock: CremaClock

    init(interval: TimeInterval, clock: CremaClock) {
        state = Mutex(RepeatedFailureLog(interval: interval))
        self.clock = clock
    }

    func occurred() -> RepeatedFailureLog.Decision {
        let now = clock.now
        return state.withLock { $0.occurred(at: now) }
    }
}
