import Synchronization

/// Something that happens once in a test (a promotion finished, a read began to wait), for others to wait on instead of
/// sleeping: a sleep is too short on a busy machine and wasted on a quiet one.
public final class TestEvent: Sendable {
    private let state = Mutex<(happened: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    /// Whether it has happened.
    public var happened: Bool { state.withLock { $0.happened } }

    /// Marks it happened and wakes every waiter; later calls do nothing.
    public func signal() {
        let waiting = state.withLock { state in
            defer { state.waiting = [] }
            state.happened = true
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Returns once it has happened (at once if it has).
    public func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.happened { return true }
                state.waiting.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }
}
