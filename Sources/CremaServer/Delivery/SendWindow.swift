/// How many claimed pushes one dispatcher worker has on the wire, and when it may claim more. Outcomes are recorded
/// as they come back, not per batch, so one slow answer holds only its own push; claims wait until a quarter of
/// the window is free (or the worker is idle), so they stay batched under load.
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

    mutating func started(_ count: Int) {
        inFlight += count
    }

    mutating func finished(_ count: Int) {
        inFlight = max(0, inFlight - count)
    }
}
