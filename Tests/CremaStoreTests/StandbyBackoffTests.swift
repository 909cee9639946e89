@testable import CremaStore
import Testing

/// The pure backoff of standby reads: how many reads skip the standby after misses, and how a served read resets it.
@Suite("Standby backoff")
struct StandbyBackoffTests {
    /// Runs `reads` reads, each missing when `misses` says so, and returns which tried the standby.
    static func tries(_ backoff: inout StandbyBackoff, reads: Int, misses: Bool) -> [Bool] {
        (0..<reads).map { _ in
            guard backoff.tryStandby() else { return false }
            if misses { backoff.missed() } else { backoff.served() }
            return true
        }
    }

    @Test("A standby that serves is tried for every read")
    func aServingStandbyIsAlwaysTried() {
        var backoff = StandbyBackoff()
        #expect(Self.tries(&backoff, reads: 5, misses: false) == [true, true, true, true, true])
    }

    @Test("Misses in a row skip one read, then two, then four")
    func missesDoubleTheSkippedReads() {
        var backoff = StandbyBackoff()
        #expect(Self.tries(&backoff, reads: 10, misses: true) == [true, false, true, false, false, true, false, false, false, false])
    }

    @Test("A served read after misses ends the skipping at once")
    func aServedReadResetsTheBackoff() {
        var backoff = StandbyBackoff()
        _ = Self.tries(&backoff, reads: 6, misses: true)
        backoff.served()
        #expect(backoff == StandbyBackoff())
        #expect(Self.tries(&backoff, reads: 2, misses: true) == [true, false])
    }

    @Test("The skipping never grows past its cap")
    func theSkippingIsCapped() {
        var backoff = StandbyBackoff()
        for _ in 0..<20 { backoff.missed() }
        #expect(backoff.skipping == StandbyBackoff.maxSkipped)
        #expect(backoff.nextSkip == StandbyBackoff.maxSkipped)
    }
}
