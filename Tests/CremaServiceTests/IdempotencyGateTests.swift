import CremaClock
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Synchronization
import Testing

/// The gate's answers to a duplicate when the key is held by another process (a claim in the database, not a request
/// here): it claims again after each wait until the first answers (replay), gives the key back (performed here), or
/// the wait ends (`idempotency_in_progress`). Its sleep is the test's, which moves the other process on instead of
/// taking time.
@Suite(.timeLimit(.minutes(2))) struct IdempotencyGateTests {
    static let request = IdempotentRequest(scope: "admin:bootstrap", key: "gate-1", path: "POST /v1/webhooks", body: "sha256:00")
    static let performed = IdempotencyGate.Performed(status: 201, shown: #"{"id":"b","secret":"s"}"#, kept: #"{"id":"b"}"#)

    @Test("a key held elsewhere is waited for and its answer replayed") func aKeyHeldElsewhereIsWaitedForAndItsAnswerReplayed() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            let other = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            let sleeps = Mutex<[Duration]>([])
            let gate = IdempotencyGate(repository: keys, clock: .sleeping { duration in
                sleeps.withLock { $0.append(duration) }
                // The other process answers during the first wait.
                try await keys.complete(other, answer: CommandResponse(status: 201, body: #"{"id":"a"}"#, replayed: false))
            })
            let outcome = try await gate.run(Self.request, tenant: "default") {
                Issue.record("performed although the key was answered")
                return Self.performed
            }
            #expect(outcome.response == CommandResponse(status: 201, body: #"{"id":"a"}"#, replayed: true))
            #expect(sleeps.withLock { $0 } == [IdempotencyGate.pollInterval])
        }
    }

    @Test("a key given back elsewhere is performed here") func aKeyGivenBackElsewhereIsPerformedHere() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            let other = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            let gate = IdempotencyGate(repository: keys, clock: .sleeping { _ in try await keys.release(other) })
            let outcome = try await gate.run(Self.request, tenant: "default") { Self.performed }
            #expect(outcome.response == CommandResponse(status: 201, body: Self.performed.shown, replayed: false))
            #expect(outcome.keeping == .kept)
            // What is kept for replays is the answer without what it showed once.
            guard case .answered(let kept) = try await keys.claim(Self.request, tenant: "default") else {
                Issue.record("no answer kept")
                return
            }
            #expect(kept.body == Self.performed.kept)
        }
    }

    @Test("the wait ends with idempotency in progress") func theWaitEndsWithIdempotencyInProgress() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            _ = try Self.claimed(try await keys.claim(Self.request, tenant: "default"))
            let sleeps = Mutex(0)
            let gate = IdempotencyGate(
                repository: keys, longestWait: .milliseconds(300), pollInterval: .milliseconds(100), clock: .sleeping { _ in sleeps.withLock { $0 += 1 } })
            await #expect(throws: ServiceError.idempotencyInProgress) {
                _ = try await gate.run(Self.request, tenant: "default") { Self.performed }
            }
            #expect(sleeps.withLock { $0 } == 3)
        }
    }

    @Test("a failed request here lets its waiting duplicate perform it") func aFailedRequestHereLetsItsWaitingDuplicatePerformIt() async throws {
        try await TestDatabase.with { db in
            let keys = IdempotencyRepository(pool: db.pool, clock: .system)
            let waits = GateWaits()
            let gate = IdempotencyGate(repository: keys, clock: .sleeping(waits.sleep))
            let (started, start) = AsyncStream<Void>.makeStream()
            let (failing, fail) = AsyncStream<Void>.makeStream()
            let first = Task {
                try await gate.run(Self.request, tenant: "default") {
                    start.yield()
                    for await _ in failing { break }
                    throw Refused()
                }
            }
            for await _ in started { break }
            let duplicate = Task { try await gate.run(Self.request, tenant: "default") { Self.performed } }
            #expect(await waits.next() == IdempotencyGate.longestWait)
            fail.yield()
            await #expect(throws: Refused.self) { try await first.value }
            let outcome = try await duplicate.value
            #expect(outcome.response == CommandResponse(status: 201, body: Self.performed.shown, replayed: false))
        }
    }

    struct Refused: Error {}

    static func claimed(_ claim: IdempotencyRepository.Claim) throws -> IdempotencyClaim {
        guard case .claimed(let claim) = claim else { throw Unexpected() }
        return claim
    }

    struct Unexpected: Error {}
}
