import CremaClock
import CremaPostgres
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// Administrative POSTs claim their Idempotency-Key before they are performed, on a real database: one request
/// performs, a duplicate meanwhile is told it is in progress (`IdempotencyGate` then waits), a later one gets the
/// first answer, and a claim whose process died lapses after its lease. The lease is passed by advancing the clock the
/// repository reads, not by waiting.
@Suite(.timeLimit(.minutes(2))) struct IdempotencyClaimTests {
    static let request = IdempotentRequest(scope: "admin:bootstrap", key: "k-1", path: "POST /v1/admin/tenants/default/api-keys", body: #"{"role":"pos"}"#)
    static let answer = CommandResponse(status: 201, body: #"{"id":"a"}"#, replayed: false)

    @Test("a new key is claimed and later requests get its answer") func aNewKeyIsClaimedAndLaterRequestsGetItsAnswer() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            let claim = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            try await keys.complete(claim, answer: Self.answer)
            let replay = try await keys.claim(Self.request, tenant: "default")
            guard case .answered(let answer) = replay else { Issue.record("expected the stored answer, got \(replay)"); return }
            #expect(answer == CommandResponse(status: 201, body: #"{"id":"a"}"#, replayed: true))
        }
    }

    @Test("a duplicate while the first is performed is told it is in progress") func aDuplicateWhileTheFirstIsPerformedIsToldItIsInProgress() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            _ = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            #expect(Self.inProgress(try await keys.claim(Self.request, tenant: "default")))
        }
    }

    @Test("the key with another request is a mismatch even while in progress") func theKeyWithAnotherRequestIsAMismatchEvenWhileInProgress() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            var other = Self.request
            other.body = #"{"role":"barista"}"#
            let claim = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            await #expect(throws: StoreError.idempotencyMismatch) { try await keys.claim(other, tenant: "default") }
            try await keys.complete(claim, answer: Self.answer)
            await #expect(throws: StoreError.idempotencyMismatch) { try await keys.claim(other, tenant: "default") }
        }
    }

    @Test("a released key is claimed again at once") func aReleasedKeyIsClaimedAgainAtOnce() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            try await keys.release(try Self.claimed(try await keys.claim(Self.request, tenant: "default")))
            _ = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
        }
    }

    @Test("an abandoned claim lapses after its lease and its late answer is dropped") func anAbandonedClaimLapsesAfterItsLeaseAndItsLateAnswerIsDropped() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let keys = IdempotencyRepository(pool: db.pool, clock: clock.crema)
            let abandoned = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            await clock.advance(IdempotencyRepository.pendingLease + 1)
            let taken = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            // The new claim has a lease of its own.
            #expect(Self.inProgress(try await keys.claim(Self.request, tenant: "default")))
            #expect(try await keys.complete(abandoned, answer: CommandResponse(status: 201, body: #"{"id":"late"}"#, replayed: false)) == false)
            try await keys.release(abandoned)
            #expect(try await keys.complete(taken, answer: Self.answer))
            let replay = try await keys.claim(Self.request, tenant: "default")
            guard case .answered(let answer) = replay else { Issue.record("expected the stored answer, got \(replay)"); return }
            #expect(answer.body == #"{"id":"a"}"#)
        }
    }

    @Test("a claim within its lease is not taken over") func aClaimWithinItsLeaseIsNotTakenOver() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let keys = IdempotencyRepository(pool: db.pool, clock: clock.crema)
            _ = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            await clock.advance(IdempotencyRepository.pendingLease - 5)
            #expect(Self.inProgress(try await keys.claim(Self.request, tenant: "default")))
        }
    }

    static func inProgress(_ claim: IdempotencyRepository.Claim) -> Bool {
        if case .inProgress = claim { return true }
        return false
    }

    static func claimed(_ claim: IdempotencyRepository.Claim) throws -> IdempotencyClaim {
        guard case .claimed(let claim) = claim else { throw Unexpected.claim("\(claim)") }
        return claim
    }

    enum Unexpected: Error { case claim(String) }
}
