/// A small deterministic random number generator (a 64-bit linear congruential step, its high bits folded in):
/// property tests draw from it so that every run sees the same cases and a failure can be found again.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 11 ^ state
    }
}
