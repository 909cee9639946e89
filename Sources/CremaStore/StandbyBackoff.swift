/// After a read the standby could not serve (behind, failed, not a standby), the next reads go straight to the
/// primary: one after the first miss, twice as many after each further miss in a row, at most `maxSkipped`; a
/// read the standby serves resets it. So a lagging or dead standby costs one read in many its wait or its timeout,
/// not every read. Counted in reads, not time: pure, and it needs no clock.
struct StandbyBackoff: Sendable, Equatable {
    static let maxSkipped = 1024
    /// Reads still to send to the primary before the standby is tried again.
    private(set) var skipping = 0
    /// How many the next miss skips.
    private(set) var nextSkip = 1

    /// Whether this read should try the standby (false: it is one of the skipped).
    mutating func tryStandby() -> Bool {
        guard skipping > 0 else { return true }
        skipping -= 1
        return false
    }

    mutating func served() {
        skipping = 0
        nextSkip = 1
    }

    mutating func missed() {
        skipping = nextSkip
        nextSkip = min(nextSkip * 2, Self.maxSkipped)
    }
}
