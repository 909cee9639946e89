/// Which tenant a dispatcher worker claims for next: tenants with due pushes take turns, so a tenant with ten thousand
/// rows due holds another's one push back by a single claim, and a tenant alone is claimed for every time (idle
/// capacity is never held back). A pure machine: the worker performs what `next()` says and reports what came of it.
///
/// What a worker knows of who has work comes for free most of the time: the change feed names the tenants whose
/// commits queued pushes, and a recorded outcome names its tenant (a retry comes due, or the push an activity's
/// sequence was waiting behind is now free). Only when it has heard of nobody, or may have missed something (it
/// started, its poll timed out, it reconnected, the feed lost track), does it ask the database which tenants have due
/// work (`DeliveryRepository.tenantsWithDueWork`): one probe per tenant, once per poll interval at most when idle.
struct ClaimTurns: Sendable, Equatable {
    /// What the worker does next.
    enum Next: Sendable, Equatable {
        /// Ask the database which tenants have due work, then report it with `surveyed(_:)`.
        case survey
        /// Claim this tenant's due rows, then report it with `claimed(_:count:limit:)`.
        case claim(String)
        /// Nobody is known to have work: wait for a ring or the poll interval.
        case idle
    }

    /// Tenants believed to have due work, in `tenant_id` order.
    private(set) var waiting: [String] = []
    /// The tenant claimed for last: the next turn is the first after it, wrapping around.
    private(set) var last: String?
    /// Whether the worker may have missed work it was not told of.
    private(set) var surveyDue = true

    /// What to do now.
    func next() -> Next {
        if surveyDue { return .survey }
        guard let first = waiting.first else { return .idle }
        guard let last else { return .claim(first) }
        return .claim(waiting.first { $0 > last } ?? first)
    }

    /// The database's answer: exactly these tenants have due work now.
    mutating func surveyed(_ tenants: [String]) {
        waiting = Array(Set(tenants)).sorted()
        surveyDue = false
    }

    /// A claim for `tenant` took `count` rows of the `limit` asked: fewer means it has nothing more due now, so it
    /// waits for news of more; as many means it may have more, after the others' turns.
    mutating func claimed(_ tenant: String, count: Int, limit: Int) {
        last = tenant
        if count < limit { waiting.removeAll { $0 == tenant } }
    }

    /// These tenants may have due work (their commits queued pushes, or their pushes' outcomes were recorded).
    mutating func heard(of tenants: some Sequence<String>) {
        let merged = Set(waiting).union(tenants)
        if merged.count != waiting.count { waiting = merged.sorted() }
    }

    /// The worker may have missed work: survey before the next claim.
    mutating func mayHaveMissedWork() {
        surveyDue = true
    }
}
