/// How many claimed pushes one dispatcher worker has on the wire, and when it may claim more. Outcomes are recorded
/// as they come back, not per batch, so one slow answer holds only its own push; claims wait until a quarter of
/// the window is free (or the worker is idle), and a few outcomes wait a moment for more, so statements stay
/// batched under load.
struct SendWindow: Sendable, Equatable {
    /// The most pushes in flight at once (`DispatcherConfiguration.batchSize`).
    let capacity: Int
    private(set) var inFlight = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many rows to claim now, or nil to wait for sends to finish first.
    var claimLimit: Int? {
        let room = capacity - inFlight
        guard room > 0, inFlight == 0 || room >= max(1, capacity / 4) else { return nil }
        return room
    }

    /// Whether `finished` outcomes are few enough to wait a moment for more before recording them: fewer than a
    /// quarter of the window, while more sends than that are still out.
    func isWorthWaiting(finished: Int) -> Bool {
        finished < max(1, capacity / 4) && inFlight > finished
    }

    mutating func started(_ count: Int) {
        inFlight += count
    }

    mutating func finished(_ count: Int) {
        inFlight = max(0, inFlight - count)
    }
}
