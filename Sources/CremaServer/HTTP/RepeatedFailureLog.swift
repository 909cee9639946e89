import Foundation
import Synchronization

/// At most one log line per `interval` for a failure that every request repeats (the database down): the first at
/// once, then one that counts the requests left out. Without it an outage wrote a line per failed request, 40 a second
/// with four retrying clients and thousands under real traffic (docs/reliability.md).
struct RepeatedFailureLog: Sendable {
    /// What to do with one more occurrence.
    enum Decision: Equatable, Sendable {
        /// Write a line; `omitted` occurrences since the previous line were not written.
        case log(omitted: Int)
        case omit
    }

    let interval: TimeInterval
    private var lastLine: Date?
    private var omitted = 0

    init(interval: TimeInterval) {
        self.interval = interval
    }

    /// A clock that went backwards starts a new line rather than silencing the failure.
    mutating func occurred(at now: Date) -> Decision {
        if let lastLine, now >= lastLine, now.timeIntervalSince(lastLine) < interval {
            omitted += 1
            return .omit
        }
        defer {
            lastLine = now
            omitted = 0
        }
        return .log(omitted: omitted)
    }
}

/// A `RepeatedFailureLog` shared by every request, read on the service's clock.
final class SharedFailureLog: Sendable {
    private let state: Mutex<RepeatedFailureLog>
    private let now: @Sendable () -> Date

    init(interval: TimeInterval, now: @escaping @Sendable () -> Date) {
        state = Mutex(RepeatedFailureLog(interval: interval))
        self.now = now
    }

    func occurred() -> RepeatedFailureLog.Decision {
        let now = now()
        return state.withLock { $0.occurred(at: now) }
    }
}
