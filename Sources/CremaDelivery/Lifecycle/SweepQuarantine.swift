import Foundation
import Synchronization

/// Orders whose close failed for a reason other than a refusal (a fault of the database or of the order's own data):
/// left out of the scans for a while, so one bad order can never hold the head of every batch and stop the others
/// from expiring. Told once at warning, then at debug; tried again after a wait that doubles, up to an hour.
final class SweepQuarantine: Sendable {
    private struct Entry {
        var failures: Int
        var until: Date
    }

    /// Orders held at once; past it the oldest entries are dropped (they are tried again, which is safe).
    static let capacity = 1_000
    static let longestWait: TimeInterval = 3_600

    private let entries = Mutex<[UUID: Entry]>([:])
    /// The first wait after a failure; the sweep's interval.
    let firstWait: TimeInterval

    init(firstWait: TimeInterval) {
        self.firstWait = firstWait
    }

    /// The orders to leave out of a scan at `now`.
    func excluded(at now: Date) -> [UUID] {
        entries.withLock { entries in entries.filter { $0.value.until > now }.map(\.key) }
    }

    /// Notes a failed close; true the first time this order failed (the time to tell an operator).
    func failed(_ id: UUID, at now: Date) -> Bool {
        entries.withLock { entries in
            var entry = entries[id] ?? Entry(failures: 0, until: now)
            entry.failures += 1
            entry.until = now.addingTimeInterval(min(Self.longestWait, firstWait * pow(2, Double(entry.failures - 1))))
            if entries[id] == nil, entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.until < $1.value.until })?.key {
                entries[oldest] = nil
            }
            entries[id] = entry
            return entry.failures == 1
        }
    }

    /// Forgets an order that closed, or no longer needs closing.
    func cleared(_ id: UUID) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}
