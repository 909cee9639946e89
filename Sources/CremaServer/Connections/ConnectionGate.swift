import Synchronization

/// Counts open connections across every event loop and admits a new one only under the cap, so a flood
/// is refused at once instead of queueing in the listen backlog (where health checks would wait too).
final class ConnectionGate: Sendable {
    let limit: Int
    private let count = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes a place if one is free; every `true` must be paired with one `release()`.
    func admit() -> Bool {
        if count.wrappingAdd(1, ordering: .relaxed).newValue <= limit { return true }
        count.wrappingSubtract(1, ordering: .relaxed)
        return false
    }

    func release() { count.wrappingSubtract(1, ordering: .relaxed) }
}
