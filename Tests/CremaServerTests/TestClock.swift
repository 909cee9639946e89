import Foundation
import Synchronization

/// A clock tests move by hand, so code that reads the time is tested at the instants the test chooses, and no
/// test waits for time to pass.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
