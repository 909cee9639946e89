public import CremaClock
public import CremaStore
import Synchronization

/// Runs a POST outside the order commands (administration, webhooks) once per Idempotency-Key, with the answer an
/// order command gives a concurrent duplicate: the duplicate waits for the first request and replays its answer
/// (`CommandResponse.replayed`, sent as `Idempotent-Replayed: true`); if the first failed and gave the key back, the
/// duplicate performs the request itself.
///
/// An order command claims its key inside its own transaction, so a duplicate waits on the key's row lock. The
/// work of these POSTs spans statements and services that cannot share one transaction, so the key is claimed first
/// in a statement of its own (`IdempotencyRepository.claim`), then answered (`complete`) or given back (`release`),
/// and a duplicate waits here instead: a duplicate in this process is woken when the request holding the key here
/// ends; one whose key is held by another process claims again every `pollInterval`. The wait is bounded by
/// `longestWait`, as an order command's is by the database's lock timeout; past it the duplicate is refused with
/// `ServiceError.idempotencyInProgress`, and the same request sent later gets the first answer.
///
/// Request bodies are kept as their SHA-256 only (`IdempotentRequest.administrative`), as some carry a secret (a
/// `.p8`). What is shown once (an issued API key, a webhook's secret) is kept without it (`Performed.kept`), so a
/// replay answers everything but the secret.
public final class IdempotencyGate: Sendable {
    /// What a performed request answers: its status, the body shown to this caller, and the body kept for replays.
    public struct Performed: Sendable {
        public var status: Int
        public var shown: String
        public var kept: String

        public init(status: Int, shown: String, kept: String) {
            self.status = status
            self.shown = shown
            self.kept = kept
        }
    }

    /// What happened to a performed request's answer: kept for replays, or not (the caller logs why).
    public enum Keeping: Sendable, Equatable {
        /// Kept, or nothing to keep (the answer is a replay).
        case kept
        /// The claim lapsed before the answer was kept and another request took the key over: it may have performed
        /// the request again.
        case claimLapsed
        /// The answer could not be stored (`code` is the store error's): a retry after the lease performs the request
        /// again.
        case notKept(code: String)
    }

    /// The answer to a gated request and whether it was kept.
    public struct Outcome: Sendable {
        public var response: CommandResponse
        public var keeping: Keeping
    }

    /// How long a duplicate waits for the request holding its key: as long as an order command's duplicate waits on
    /// the key's row (the database's `lock_timeout`, 10 s).
    public static let longestWait: Duration = .seconds(10)
    /// How often a duplicate whose key is held by another process claims again.
    public static let pollInterval: Duration = .milliseconds(100)

    private let repository: IdempotencyRepository
    private let longestWait: Duration
    private let pollInterval: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    /// The keys held by a request in this process, each with the duplicates waiting for it to end.
    private let held = Mutex(Waiting())

    /// - Parameters:
    ///   - longestWait: how long a duplicate waits at most; `pollInterval`: how often it claims again meanwhile.
    ///   - clock: waits between two claims on it, so tests control time.
    public init(
        repository: IdempotencyRepository, longestWait: Duration = IdempotencyGate.longestWait,
        pollInterval: Duration = IdempotencyGate.pollInterval, clock: CremaClock
    ) {
        self.repository = repository
        self.longestWait = longestWait
        self.pollInterval = pollInterval
        self.sleep = { try await clock.sleep(for: $0) }
    }

    /// Performs `request` in `tenant` unless a request with its key was answered: then, or once the request holding
    /// the key answers, the first answer is replayed. Throws what `perform` throws (the key is then given back),
    /// `StoreError.idempotencyMismatch` for a key used with another request, and `ServiceError.idempotencyInProgress`
    /// when the wait for another request with the key ends.
    public func run(
        _ request: IdempotentRequest, tenant: String, _ perform: () async throws -> Performed
    ) async throws -> Outcome {
        let slot = Slot(tenant: tenant, scope: request.scope, key: request.key)
        while true {
            switch await enter(slot) {
            case .holder: break
            case .waited(gaveUp: false): continue
            case .waited(gaveUp: true): throw ServiceError.idempotencyInProgress
            }
            var gaveUp = false
            defer { leave(slot, gaveUp: gaveUp) }
            for poll in 0... {
                if let outcome = try await attempt(request, tenant: tenant, perform) { return outcome }
                // Held by another process: claim again after a while, until the wait is over.
                guard pollInterval * poll < longestWait else { break }
                try await sleep(pollInterval)
            }
            gaveUp = true
            throw ServiceError.idempotencyInProgress
        }
    }

    /// Claims the key once and, if claimed, performs and answers; nil when another process holds the key.
    private func attempt(
        _ request: IdempotentRequest, tenant: String, _ perform: () async throws -> Performed
    ) async throws -> Outcome? {
        let claim: IdempotencyClaim
        switch try await repository.claim(request, tenant: tenant) {
        case .answered(let replay): return Outcome(response: replay, keeping: .kept)
        case .inProgress: return nil
        case .claimed(let claimed): claim = claimed
        }
        let performed: Performed
        do {
            performed = try await perform()
        } catch {
            // Refused, or failed: free the key for a retry (should that fail too, the claim lapses after its lease).
            // In a task of its own, which the request's cancellation does not reach: a client gone must not leave
            // the key held.
            await Task { [repository] in try? await repository.release(claim) }.value
            throw error
        }
        // Done: the answer goes to the client even if it cannot be kept, since what it shows once (a key, a secret)
        // would otherwise be lost; a retry then waits out the lease and performs again. Kept in a task of its own too.
        let kept = CommandResponse(status: performed.status, body: performed.kept, replayed: false)
        let keeping: Keeping
        switch await Task(operation: { [repository] in try await repository.complete(claim, answer: kept) }).result {
        case .success(true): keeping = .kept
        case .success(false): keeping = .claimLapsed
        case .failure(let error): keeping = .notKept(code: (error as? StoreError)?.code ?? "internal_error")
        }
        return Outcome(response: CommandResponse(status: performed.status, body: performed.shown, replayed: false), keeping: keeping)
    }

    // MARK: - Duplicates within this process

    /// A key as the database's unique index on administrative keys tells keys apart.
    private struct Slot: Hashable {
        var tenant: String
        var scope: String
        var key: String
    }

    /// Each key held here with its waiters by number. A waiter is resumed with true when the holder gave up waiting
    /// for another process, or when its own wait ran out, so it gives up too.
    private struct Waiting {
        var slots: [Slot: [UInt64: Waiter]] = [:]
        var next: UInt64 = 0
    }

    private enum Waiter {
        /// Numbered, not yet suspended.
        case pending
        case waiting(CheckedContinuation<Bool, Never>)
        /// Its wait ran out before it suspended.
        case expired
    }

    private enum Entry {
        /// The key was free here: this request holds it until `leave`.
        case holder
        /// Another request here held the key; it has ended (and given up, if `gaveUp`), or this wait ran out.
        case waited(gaveUp: Bool)
    }

    /// Takes the key's slot in this process, or waits (at most `longestWait`) for the request holding it to leave it.
    private func enter(_ slot: Slot) async -> Entry {
        let number: UInt64? = held.withLock { state in
            guard state.slots[slot] != nil else {
                state.slots[slot] = [:]
                return nil
            }
            state.next += 1
            state.slots[slot]?[state.next] = .pending
            return state.next
        }
        guard let number else { return .holder }
        let timer = Task { [sleep, longestWait] in
            try? await sleep(longestWait)
            guard !Task.isCancelled else { return }
            self.expire(number, in: slot)
        }
        defer { timer.cancel() }
        let gaveUp = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let early: Bool? = held.withLock { state in
                switch state.slots[slot]?[number] {
                // The holder left meanwhile: claim again at once.
                case nil: return false
                case .expired:
                    state.slots[slot]?.removeValue(forKey: number)
                    return true
                case .pending, .waiting:
                    state.slots[slot]?[number] = .waiting(continuation)
                    return nil
                }
            }
            if let early { continuation.resume(returning: early) }
        }
        return .waited(gaveUp: gaveUp)
    }

    /// Ends a waiter's wait: resumed now if suspended, else when it suspends.
    private func expire(_ number: UInt64, in slot: Slot) {
        let suspended: CheckedContinuation<Bool, Never>? = held.withLock { state in
            switch state.slots[slot]?[number] {
            case .waiting(let continuation):
                state.slots[slot]?.removeValue(forKey: number)
                return continuation
            case .pending:
                state.slots[slot]?[number] = .expired
                return nil
            case .expired, nil: return nil
            }
        }
        suspended?.resume(returning: true)
    }

    /// Frees the key's slot here and wakes its waiters: they claim the key again (and replay its answer, or perform
    /// the request the holder gave back), or give up with the holder.
    private func leave(_ slot: Slot, gaveUp: Bool) {
        let waiters = held.withLock { state in state.slots.removeValue(forKey: slot) ?? [:] }
        for case .waiting(let continuation) in waiters.values { continuation.resume(returning: gaveUp) }
    }
}
