import CremaCore
import Testing

@Suite struct TenantLimitsTests {
    @Test("a rate reads as rate/burst or rate alone, and 0 turns the limit off")
    func rateParsing() {
        #expect(RateSetting(parsing: "200/400") == .limited(RequestRate(perSecond: 200, burst: 400)!))
        #expect(RateSetting(parsing: "50") == .limited(RequestRate(perSecond: 50, burst: 50)!))
        #expect(RateSetting(parsing: "0") == .off)
        #expect(RateSetting(parsing: "200/400")?.description == "200/400")
    }

    @Test("a rate with a burst below it, a negative or empty part, or extra parts is refused")
    func badRates() {
        for text in ["400/200", "-1/5", "/400", "200/", "", "a/b", "1/2/3", "0/10", "2000000/2000000"] {
            #expect(RateSetting(parsing: text) == nil, "\(text)")
        }
    }

    @Test("a tenant's own values replace the defaults, field by field")
    func overrides() {
        let limits = TenantLimits.defaults.overridden(by: TenantLimitOverrides(tokensPerCustomer: 5, rate: .off))
        #expect(limits.tokensPerCustomer == 5)
        #expect(limits.rate == .off)
        #expect(limits.streamsPerKey == 64)
        #expect(limits.webhooks == 20)
        #expect(limits.eventsPerOrder == 64)
    }

    @Test("a count outside its range is named, the first one found")
    func invalidCounts() {
        #expect(TenantLimitOverrides(tokensPerCustomer: 20, eventsPerOrder: 64).invalidCount == nil)
        #expect(TenantLimitOverrides(webhooks: 0).invalidCount?.name == .webhooks)
        #expect(TenantLimitOverrides(eventsPerOrder: 1).invalidCount?.name == .eventsPerOrder)
        #expect(TenantLimitOverrides(tokensPerCustomer: 1_001).invalidCount?.value == 1_001)
    }

    @Test("the last place of an order is kept for its end, so a flood of delays cannot make it unclosable")
    func lastEventIsForTheEnd() {
        let limits = TenantLimits(tokensPerCustomer: 1, streamsPerKey: 1, webhooks: 1, eventsPerOrder: 4, rate: .off)
        #expect(limits.admits(.delayed, toOrderHolding: 2))
        #expect(!limits.admits(.delayed, toOrderHolding: 3))
        #expect(!limits.admits(.started, toOrderHolding: 3))
        for end in [OrderEventType.pickedUp, .canceled, .expired] {
            #expect(limits.admits(end, toOrderHolding: 3))
            #expect(!limits.admits(end, toOrderHolding: 4))
        }
    }

    @Test("every default is inside its own range")
    func defaultsAreValid() {
        for name in LimitName.allCases {
            guard let value = TenantLimits.defaults.count(name) else { continue }
            #expect(TenantLimits.countRange[name]?.contains(value) == true, "\(name)")
        }
    }
}

@Suite struct TokenBucketTests {
    let rate = RequestRate(perSecond: 2, burst: 4)!

    @Test("a new caller may send its whole burst at once, and the next request is refused")
    func burstThenRefuse() {
        var bucket = TokenBucket(rate: rate, now: 100)
        for _ in 0..<4 { #expect(bucket.take(rate: rate, now: 100) == .allowed) }
        #expect(bucket.take(rate: rate, now: 100) == .refused(retryAfter: 1))
    }

    @Test("the bucket refills at the rate's pace, never above the burst")
    func refill() {
        var bucket = TokenBucket(rate: rate, now: 0)
        for _ in 0..<4 { _ = bucket.take(rate: rate, now: 0) }
        #expect(bucket.take(rate: rate, now: 0.5) == .allowed)
        #expect(bucket.take(rate: rate, now: 0.5) == .refused(retryAfter: 1))
        #expect(!bucket.isFull(rate: rate, now: 1))
        #expect(bucket.isFull(rate: rate, now: 2.5))
        var later = bucket
        for _ in 0..<4 { #expect(later.take(rate: rate, now: 60) == .allowed) }
        #expect(later.take(rate: rate, now: 60) != .allowed)
    }

    @Test("Retry-After is how long until one request is allowed, rounded up")
    func retryAfterRoundsUp() {
        let slow = RequestRate(perSecond: 1, burst: 1)!
        var bucket = TokenBucket(rate: slow, now: 0)
        _ = bucket.take(rate: slow, now: 0)
        #expect(bucket.take(rate: slow, now: 0) == .refused(retryAfter: 1))
        let crawl = RequestRate(perSecond: 1, burst: 1)!
        var empty = TokenBucket(rate: crawl, now: 0)
        _ = empty.take(rate: crawl, now: 0)
        #expect(empty.take(rate: crawl, now: 0.9) == .refused(retryAfter: 1))
    }

    @Test("a clock that goes back neither refills nor spends")
    func clockGoingBack() {
        var bucket = TokenBucket(rate: rate, now: 10)
        for _ in 0..<4 { _ = bucket.take(rate: rate, now: 10) }
        #expect(bucket.take(rate: rate, now: 5) != .allowed)
        #expect(bucket.take(rate: rate, now: 10.5) == .allowed)
    }
}
