import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// A tenant's limits are read at most once per `TenantLimitsDirectory.freshFor`, one read at a time, and at once after
/// this process changed them.
@Suite struct TenantLimitsDirectoryTests {
    @Test("fifty callers at once read a tenant's limits once; the next read comes after the period or a change")
    func oneReadPerTenantAndPeriod() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let database = CremaDatabase(pool: pool, clock: .system)
            let clock = TestClock(Date())
            let directory = TenantLimitsDirectory(defaults: .defaults, repository: database.limits, clock: clock.crema)
            func trips() async throws -> Int { try await pool.withConnection { $0.roundTrips } }
            let start = try await trips()
            let seen = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await directory.limits(for: "default").tokensPerCustomer } }
                return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
            }
            #expect(seen == [20])
            #expect(try await trips() - start == 1)
            try await database.limits.put(TenantLimitOverrides(tokensPerCustomer: 5), tenant: "default", at: clock.now)
            let afterPut = try await trips()
            // Another process's change is seen once the period is over; this process's at once (`forget`).
            #expect(try await directory.limits(for: "default").tokensPerCustomer == 20)
            await clock.advance(TenantLimitsDirectory.freshFor)
            #expect(try await directory.limits(for: "default").tokensPerCustomer == 5)
            #expect(try await trips() - afterPut == 1)
            try await database.limits.put(TenantLimitOverrides(tokensPerCustomer: 7), tenant: "default", at: clock.now)
            directory.forget("default")
            #expect(try await directory.limits(for: "default").tokensPerCustomer == 7)
            await pool.close()
        }
    }
}

/// What an order command leases its connection with: the share last read for its tenant, at no round trip of its own.
@Suite struct TenantShareTests {
    @Test("a command's share is the one last read for its tenant, read by nobody but the rate check, and 1 before any read")
    func theShareLastReadCostsNoRead() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let database = CremaDatabase(pool: pool, clock: .system)
            let clock = TestClock(Date())
            let directory = TenantLimitsDirectory(defaults: .defaults, repository: database.limits, clock: clock.crema)
            try await database.limits.put(TenantLimitOverrides(share: 3), tenant: "default", at: clock.now)
            func trips() async throws -> Int { try await pool.withConnection { $0.roundTrips } }
            let start = try await trips()
            #expect(directory.lastRead(for: "default") == nil)
            #expect(try await trips() == start)
            #expect(try await directory.limits(for: "default").share == 3)
            #expect(directory.lastRead(for: "default")?.share == 3)
            // Past the period the value last read still serves; the next rate check reads it again.
            await clock.advance(TenantLimitsDirectory.freshFor * 2)
            #expect(directory.lastRead(for: "default")?.share == 3)
            #expect(try await trips() - start == 1)
            await pool.close()
        }
    }
}

/// The rate limiter's memory is bounded: past its capacity it forgets the callers whose allowance has refilled.
@Suite struct RequestRateLimiterTests {
    @Test("past its capacity the limiter forgets refilled buckets and keeps the ones still spending")
    func memoryIsBounded() {
        let limiter = RequestRateLimiter(capacity: 3)
        let rate = RequestRate(perSecond: 1, burst: 2)!
        let start = Date(timeIntervalSinceReferenceDate: 1_000)
        for caller in ["a", "b", "c"] { #expect(limiter.take(caller, rate: rate, now: start) == .allowed) }
        #expect(limiter.count == 3)
        // "c" spends again later, so its bucket is not full; "a" and "b" have refilled by then.
        _ = limiter.take("c", rate: rate, now: start.addingTimeInterval(5))
        _ = limiter.take("c", rate: rate, now: start.addingTimeInterval(5))
        #expect(limiter.take("d", rate: rate, now: start.addingTimeInterval(5)) == .allowed)
        #expect(limiter.count == 2)
        // "c" kept its spent allowance: forgetting it would have handed it a fresh burst.
        #expect(limiter.take("c", rate: rate, now: start.addingTimeInterval(5)) == .refused(retryAfter: 1))
    }
}
