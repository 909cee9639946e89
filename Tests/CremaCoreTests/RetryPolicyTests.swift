import CremaAPNsProtocol
import CremaCore
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(base: 2, cap: 600, maxAttempts: 8)

    @Test("the ceiling doubles per attempt up to the cap")
    func ceilingDoubles() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, random: 1) == 2)
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil, random: 1) == 4)
        #expect(policy.delay(afterAttempt: 5, retryAfter: nil, random: 1) == 32)
        #expect(policy.delay(afterAttempt: 7, retryAfter: nil, random: 1) == 128)
        #expect(RetryPolicy(base: 2, cap: 600, maxAttempts: 20).delay(afterAttempt: 15, retryAfter: nil, random: 1) == 600)
    }

    @Test("jitter spreads waits below the ceiling but never under half the base")
    func jitter() {
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, random: 0.5) == 8)
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, random: 0) == 1)
    }

    @Test("Retry-After wins over a shorter backoff")
    func retryAfterWins() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: 30, random: 0.3) == 30)
        #expect(policy.delay(afterAttempt: 7, retryAfter: 30, random: 1) == 128)
    }

    @Test("after the last attempt there is no retry")
    func boundedAttempts() {
        #expect(policy.delay(afterAttempt: 7, retryAfter: nil, random: 0.5) != nil)
        #expect(policy.delay(afterAttempt: 8, retryAfter: nil, random: 0.5) == nil)
        #expect(policy.delay(afterAttempt: 9, retryAfter: 1, random: 0.5) == nil)
    }

    @Test("the total wait over all attempts is bounded: no retry storm, no endless retrying")
    func totalWaitIsBounded() {
        let waits = (1..<policy.maxAttempts).compactMap { policy.delay(afterAttempt: $0, retryAfter: nil, random: 1) }
        #expect(waits.count == policy.maxAttempts - 1)
        #expect(waits.reduce(0, +) == 254)
    }

    @Test("a Retry-After of more than an hour, infinity or not-a-number is not taken at its word")
    func absurdRetryAfterIsCapped() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: 1e300, random: 0) == RetryPolicy.longestRetryAfter)
        #expect(policy.delay(afterAttempt: 1, retryAfter: .infinity, random: 0) == 1)
        #expect(policy.delay(afterAttempt: 1, retryAfter: .nan, random: 0) == 1)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 30, random: 0) == 30)
    }
}
