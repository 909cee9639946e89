import CremaCore
import CremaPostgres
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// The store keeps time by the process's one clock, bound into its SQL, not by the database's `now()`: a stream ticket
/// expires, and an Idempotency-Key's window ends, when the injected clock says so. With `now()` these ran on the
/// database's time while the API reported the process's (a ticket answered as valid for 60 s of one clock, checked
/// against another).
@Suite(.timeLimit(.minutes(2))) struct StoreClockTests {
    @Test("a stream ticket expires when the process's clock passes its lifetime") func aStreamTicketExpiresWhenTheProcesssClockPassesItsLifetime() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            _ = try await StoreRepository(pool: db.pool, clock: clock.crema).put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            let stream = StreamRepository(pool: db.pool, clock: clock.crema)
            let expiry = try await stream.issueStreamTicket(StreamTicket(tenant: "default", secret: "early"), store: "market-st", in: .default, holder: "k", lifetime: 60)
            #expect(expiry == clock.now.addingTimeInterval(60), "the expiry answered is the one stored, on the process's clock")
            try await stream.issueStreamTicket(StreamTicket(tenant: "default", secret: "late"), store: "market-st", in: .default, holder: "k", lifetime: 60)
            await clock.advance(59)
            #expect(try await stream.redeemStreamTicket(StreamTicket(tenant: "default", secret: "early"), store: "market-st")?.tenant == "default")
            await clock.advance(2)
            #expect(try await stream.redeemStreamTicket(StreamTicket(tenant: "default", secret: "late"), store: "market-st") == nil, "61 s of the process's clock have passed")
        }
    }

    @Test("an Idempotency-Key's window ends on the process's clock") func anIdempotencyKeysWindowEndsOnTheProcesssClock() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let keys = IdempotencyRepository(pool: db.pool, clock: clock.crema)
            let request = IdempotentRequest(scope: "admin:bootstrap", key: "k-1", path: "POST /v1/admin/tenants/default/api-keys", body: "{}")
            guard case .claimed(let first) = try await keys.claim(request, tenant: "default") else { Issue.record("not claimed"); return }
            try await keys.complete(first, answer: CommandResponse(status: 201, body: "{}", replayed: false))
            await clock.advance(IdempotencyRepository.window - 1)
            guard case .answered = try await keys.claim(request, tenant: "default") else { Issue.record("the window ended early"); return }
            await clock.advance(2)
            guard case .claimed = try await keys.claim(request, tenant: "default") else { Issue.record("the window outlived the clock"); return }
        }
    }
}
