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
            let database = CremaDatabase(pool: pool)
            let clock = TestClock(Date())
            let directory = TenantLimitsDirectory(defaults: .defaults, repository: database.limits, now: { clock.now })
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
            clock.advance(TenantLimitsDirectory.freshFor)
            #expect(try await directory.limits(for: "default").tokensPerCustomer == 5)
            #expect(try await trips() - afterPut == 1)
            try await database.limits.put(TenantLimitOverrides(tokensPerCustomer: 7), tenant: "default", at: clock.now)
            directory.forget("default")
            #expect(try await directory.limits(for: "default").tokensPerCustomer == 7)
            await pool.close()
        }
    }
}
