import CremaAPNsKey
import CremaAPNsProtocol
public import CremaAPNs
public import CremaClock
import CremaCore
import CremaCredentials
import CremaPostgres
public import CremaStore
import Foundation
public import Logging
public import Prometheus
public import ServiceLifecycle

/// Sends the outbox to APNs (docs/design.md §6): wakes on commits that queued pushes (`ChangeFeed`; 1 s poll fallback),
/// claims due rows under a lease with SKIP LOCKED, keeps up to a batch of pushes in flight per worker over HTTP/2,
/// records outcomes as they come back (all that finished meanwhile in one statement), rescues expired leases and prunes
/// finished rows. At least once: a crash between sending and recording sends those rows again after their lease. A
/// lost connection costs no lease: outcomes wait until the database answers again, and a claim whose answer was lost
/// (committed just before a failover) is taken back by its lease id as soon as it does.
public struct Dispatcher: Service, CustomStringConvertible {
    let store: DeliveryRepository
    let client: APNsClient
    /// Which key signs each app's pushes; rows of apps it has no key for are not claimed (docs/tenants.md).
    let keyring: SigningKeyring
    /// Where a key APNs refused is marked, so every instance stops using it.
    let apnsKeys: APNsKeyRepository?
    /// Where wake-ups come from (this process's commits and other processes' announcements); nil polls only.
    let changes: ChangeFeed?
    let configuration: DispatcherConfiguration
    /// Expiries, retry and held-for-key times, latency, and every wait (the poll fallback, the linger, the maintenance
    /// tick): the root's clock, so a test moves time instead of waiting for it.
    let clock: CremaClock
    let logger: Logger
    let metrics: DispatcherMetrics

    public var description: String { "Dispatcher" }

    public init(
        store: DeliveryRepository, client: APNsClient, keyring: SigningKeyring, apnsKeys: APNsKeyRepository?, changes: ChangeFeed?,
        configuration: DispatcherConfiguration = .init(), clock: CremaClock, registry: PrometheusCollectorRegistry, logger: Logger
    ) {
        self.store = store
        self.client = client
        self.keyring = keyring
        self.apnsKeys = apnsKeys
        self.changes = changes
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.metrics = DispatcherMetrics(registry: registry)
    }

    public func run() async throws {
        // One doorbell per worker: commits that queued pushes ring them all, a finished send only its own worker's.
        let doorbells = (0..<max(1, configuration.workers)).map { _ in Doorbell(clock: clock) }
        // And one newsletter: which tenants' commits queued pushes, so each worker knows whose turn is worth a claim.
        let news = doorbells.map { _ in PushNews() }
        let changes = self.changes?.subscribe(to: .pushes)
        logger.info("dispatcher started", metadata: ["workers": "\(configuration.workers)", "batch": "\(configuration.batchSize)"])
        // The keys before the first claim; after that the maintenance tick keeps them (and retries this one).
        do {
            try await keyring.reload()
        } catch {
            // Cancelled, it is stopping before its first claim: not a fault to report.
            if !Task.isCancelled { logger.warning("could not read the APNs keys yet; retrying", metadata: ["error": "\(error)"]) }
        }
        // On graceful shutdown the workers stop claiming and finish what they have in flight (each send is bounded
        // by the APNs request timeout) and record it; then the wake-ups and the maintenance stop. A cancellation
        // (the service group failing) stops at once and records what the cancelled sends return.
        await withTaskGroup(of: Void.self) { group in
            if let changes {
                group.addTask {
                    for await change in changes {
                        for letter in news { letter.add(change) }
                        for doorbell in doorbells { await doorbell.ring() }
                    }
                }
            }
            group.addTask { await self.maintain() }
            await withTaskGroup(of: Void.self) { workers in
                for (worker, (doorbell, news)) in zip(doorbells, news).enumerated() {
                    workers.addTask {
                        await withGracefulShutdownHandler {
                            await self.work(worker, doorbell: doorbell, news: news)
                        } onGracefulShutdown: {
                            Task { await doorbell.ring() }
                        }
                    }
                }
            }
            group.cancelAll()
        }
        logger.info("dispatcher stopped")
    }

    /// One claim–send–record loop with up to `batchSize` pushes in flight. Each send runs as its own task and its
    /// outcome is recorded as soon as the worker gets to it, together with every other one that came back
    /// meanwhile; freed room is claimed again. A slow answer therefore holds only its own push, never a batch.
    /// Tenants with due work take turns (`ClaimTurns`): each claim is one tenant's.
    func work(_ worker: Int, doorbell: Doorbell, news: PushNews) async {
        let finished = FinishedSends()
        await withDiscardingTaskGroup { group in
            var window = SendWindow(capacity: configuration.batchSize)
            var failing = false
            // Claims that failed, by lease id: their rows may be in flight under a commit whose answer was lost.
            var lostClaims = LostClaims(lease: configuration.lease)
            var turns = ClaimTurns()
            // When this worker last asked the database for work (a claim or a survey): the poll fallback counts from
            // it, so a ring that brought nothing (a send it had already recorded) does not put the poll off.
            var lookedAt = clock.now
            while !Task.isCancelled {
                let stopping = Task.isShuttingDownGracefully
                if stopping, window.inFlight == 0 { break }
                do {
                    var done = finished.takeAll()
                    // A few outcomes while many sends are still out: wait a moment for more, so a statement records
                    // a batch at high rates, and never longer than the linger, so a slow send holds no one.
                    if !done.isEmpty, window.isWorthWaiting(finished: done.count) {
                        try? await clock.sleep(for: configuration.recordLinger)
                        done += finished.takeAll()
                    }
                    if !done.isEmpty {
                        do {
                            try await store.record(done, now: clock.now)
                        } catch {
                            if Self.keepsForAnotherTry(error) {
                                // Recording late is better than sending again after the lease: kept until the database
                                // answers (no claim is made meanwhile, so they are at most a window's worth).
                                finished.restore(done)
                                throw error
                            }
                            logger.error(
                                "could not record push outcomes; their rows are sent again when their lease runs out",
                                metadata: ["count": "\(done.count)", "error": "\(error)"])
                        }
                        window.finished(done.count)
                        for result in done { metrics.record(result) }
                        // A retry may be due, or a push its activity's sequence held back is free now.
                        turns.heard(of: done.lazy.map(\.delivery.tenantID))
                    }
                    if !lostClaims.isEmpty {
                        let released = try await store.release(leases: lostClaims.ids(at: clock.now))
                        lostClaims.removeAll()
                        if released > 0 {
                            turns.mayHaveMissedWork()
                            logger.info(
                                "took back pushes whose claim's answer was lost; they go now, not when their lease runs out",
                                metadata: ["worker": "\(worker)", "count": "\(released)"])
                        }
                    }
                    var claimedAll = false
                    // The time the survey and the claim read what is due by (and `lookedAt` becomes): a row they found
                    // not yet due is looked for again a poll interval after it, however long they took.
                    let claimedAt = clock.now
                    news.deliver(to: &turns)
                    if !stopping, let limit = window.claimLimit {
                        if turns.next() == .survey {
                            turns.surveyed(try await store.tenantsWithDueWork(apps: keyring.apps, now: claimedAt))
                            lookedAt = claimedAt
                        }
                        if case .claim(let tenant) = turns.next() {
                            let leaseID = UUID()
                            let batch: [ClaimedDelivery]
                            do {
                                batch = try await store.claim(
                                    for: tenant, limit: limit, lease: configuration.lease, apps: keyring.apps, now: claimedAt, leaseID: leaseID)
                            } catch {
                                // Committed or not, the answer is lost: whatever it claimed is taken back once the database answers.
                                lostClaims.add(leaseID, at: claimedAt)
                                turns.mayHaveMissedWork()
                                throw error
                            }
                            turns.claimed(tenant, count: batch.count, limit: limit)
                            lookedAt = claimedAt
                            window.started(batch.count)
                            for delivery in batch {
                                group.addTask {
                                    // One ring per batch of outcomes, not per push: the worker takes them all at once.
                                    if finished.add(await self.send(delivery)) { await doorbell.ring() }
                                }
                            }
                            // Another tenant's turn, or more of this one's: claim again before sleeping.
                            claimedAll = turns.next() != .idle
                        }
                    }
                    if failing {
                        logger.info("dispatcher reconnected to the database", metadata: ["worker": "\(worker)"])
                        failing = false
                    }
                    // Sleep only when nothing came back and the outbox had no more for us; a finished send, an order
                    // change or graceful shutdown rings the doorbell.
                    if done.isEmpty, !claimedAll {
                        // Woken by a ring, the news says whose turn it is; by the poll's timeout, a survey looks
                        // for work nobody announced (a retry come due, another process's rescue).
                        if await doorbell.wait(timeout: configuration.pollInterval, from: lookedAt) == .timedOut { turns.mayHaveMissedWork() }
                    }
                } catch {
                    // A statement interrupted by shutdown is not an outage.
                    if Task.isCancelled { break }
                    if !failing { logger.warning("dispatcher cannot reach the database; retrying", metadata: ["error": "\(error)"]) }
                    failing = true
                    turns.mayHaveMissedWork()
                    try? await clock.sleep(for: configuration.pollInterval)
                }
            }
        }
        // Cancelled: the sends still out were cancelled and have returned. Their outcomes (and any kept ones) are
        // recorded once more, outside the cancellation, so those rows come back after their backoff, not the lease.
        let rest = finished.takeAll()
        if !rest.isEmpty {
            let store = self.store
            let now = clock.now
            do {
                try await Task { try await store.record(rest, now: now) }.value
            } catch {
                logger.warning("could not record push outcomes at shutdown; their leases bring them back", metadata: ["count": "\(rest.count)", "error": "\(error)"])
            }
        }
    }

    /// Whether outcomes that could not be recorded are kept for another try: while the database is unavailable (a
    /// failover can take longer than any fixed number of tries); an error in the outcomes themselves would fail every
    /// time, so those are given up at once.
    static func keepsForAnotherTry(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isUnavailable ?? false
    }

    func send(_ delivery: ClaimedDelivery) async -> DeliveryResult {
        guard let token = delivery.token, let environment = delivery.environment, !delivery.tokenRetired else {
            return DeliveryResult(delivery: delivery, outcome: .skipped(reason: "the token was retired before this push was sent"))
        }
        let now = clock.now
        if let expiry = delivery.expiresAt, expiry < now {
            return DeliveryResult(delivery: delivery, outcome: .dead(status: nil, reason: "expired before it could be sent"))
        }
        guard let key = keyring.key(for: delivery.bundleID, tenant: delivery.tenantID) else {
            // The key was retired between the claim and now: the row waits for an instance that can sign it.
            return DeliveryResult(
                delivery: delivery, outcome: .heldForKey(at: now.addingTimeInterval(Self.heldForKeyDelay), status: nil, reason: "no signing key for \(delivery.bundleID ?? "this app") here"))
        }
        let apnsID = UUID()
        let request = APNsRequest(
            deviceToken: token, environment: environment, pushType: delivery.pushType, topic: delivery.topic,
            priority: delivery.priority, expiration: delivery.expiresAt, collapseID: delivery.collapseID, apnsID: apnsID,
            body: Data(Self.body(of: delivery, receiptKey: configuration.receiptKey).utf8))
        if delivery.attempts == 1 {
            metrics.recordLatency(.seconds(now.timeIntervalSince(delivery.plannedAt)), pushType: delivery.pushType)
        }
        do {
            let response = try await client.send(request, signedBy: key)
            if response.disposition == .signingKeyRejected { await rejected(key, for: delivery, reason: response.reason ?? "HTTP \(response.status)") }
            return DeliveryResult(delivery: delivery, outcome: outcome(of: response, for: delivery), apnsID: response.apnsID ?? apnsID)
        } catch {
            logger.debug(
                "APNs request failed", metadata: ["delivery": "\(delivery.id)", "token": "\(PushTokenValidation.redacted(token))", "error": "\(error.code)"])
            return DeliveryResult(delivery: delivery, outcome: retry(delivery, status: nil, reason: error.code, after: nil), apnsID: apnsID)
        }
    }

    /// The body as it goes out: the delivery's receipt in place of the planner's placeholder (an HMAC and one pass over
    /// at most 4 KB; a body without the placeholder, as a broadcast's, is returned as it is).
    static func body(of delivery: ClaimedDelivery, receiptKey: DeliveryReceiptKey?) -> String {
        guard let receiptKey else { return delivery.body }
        return DeliveryReceipt.filling(
            delivery.body, with: receiptKey.receipt(tenant: delivery.tenantID, deliveryID: delivery.id, orderID: delivery.orderID))
    }

    /// What the outbox row becomes after APNs' answer (docs/apns.md §3, via `APNsDisposition`).
    func outcome(of response: APNsResponse, for delivery: ClaimedDelivery) -> DeliveryOutcome {
        let reason = response.reason ?? "HTTP \(response.status)"
        switch response.disposition {
        case .delivered:
            return .sent(status: response.status, apnsID: response.apnsID)
        case .retry(let after):
            return retry(delivery, status: response.status, reason: reason, after: after)
        case .refreshProviderToken:
            // The client already minted a new token and tried once more; try again later.
            return retry(delivery, status: response.status, reason: reason, after: nil)
        case .retireToken(let since):
            logger.info(
                "APNs retired a token", metadata: ["delivery": "\(delivery.id)", "reason": "\(reason)", "target": "\(delivery.target.map { "\($0)" } ?? "-")"])
            return .tokenRetired(status: response.status, reason: reason, since: since)
        case .signingKeyRejected:
            return .heldForKey(at: clock.now.addingTimeInterval(Self.heldForKeyDelay), status: response.status, reason: "\(reason): the app's APNs key was refused; waiting for a key APNs accepts")
        case .deadLetter:
            logger.warning("APNs refused a push for good", metadata: ["delivery": "\(delivery.id)", "status": "\(response.status)", "reason": "\(reason)"])
            return .dead(status: response.status, reason: reason)
        }
    }

    /// How soon a row held for want of a key is due again. It is not claimed until some instance has a key for its
    /// app, so this only spaces out instances whose keyring has not yet heard of a rejection.
    static let heldForKeyDelay: TimeInterval = 1

    /// Marks a key APNs refused, for every instance, and stops using it here at once.
    func rejected(_ key: APNsSigningKey, for delivery: ClaimedDelivery, reason: String) async {
        keyring.refuse(key)
        logger.error(
            "APNs refused a signing key; this app's pushes wait until a key it accepts is activated",
            metadata: [
                "tenant": "\(delivery.tenantID)", "bundle_id": "\(delivery.bundleID ?? "-")", "key_id": "\(key.keyID)", "reason": "\(reason)",
            ])
        guard let apnsKeys, let bundleID = delivery.bundleID else { return }
        do {
            try await apnsKeys.reject(tenant: delivery.tenantID, bundleID: bundleID, keyID: key.keyID, fingerprint: key.fingerprint, reason: reason)
            try await keyring.reload()
        } catch {
            logger.warning("could not mark the refused APNs key", metadata: ["error": "\(error)"])
        }
    }

    func retry(_ delivery: ClaimedDelivery, status: Int?, reason: String, after: Double?) -> DeliveryOutcome {
        var policy = configuration.retry
        policy.maxAttempts = delivery.maxAttempts
        guard let delay = policy.delay(afterAttempt: delivery.attempts, retryAfter: after, random: Double.random(in: 0..<1)) else {
            return .dead(status: status, reason: "\(reason) (gave up after \(delivery.attempts) attempts)")
        }
        return .retry(at: clock.now.addingTimeInterval(delay), status: status, reason: reason)
    }

    /// Rescues expired leases and refreshes the outbox gauges every few seconds; prunes every ten minutes of the
    /// dispatcher's clock.
    func maintain() async {
        var waitingForKey = 0
        await OutboxMaintenance(rows: "deliveries", interval: configuration.maintenanceInterval, clock: clock, logger: logger).run(
            rescue: { now in try await store.rescueExpiredLeases(at: now) },
            gauge: { now in
                try await keyring.reloadIfDue()
                let depth = try await store.depth(apps: keyring.apps, now: now)
                metrics.depth(depth)
                // Said when it starts and when it ends, not every tick.
                if depth.unsignable > 0, waitingForKey == 0 {
                    logger.warning(
                        "pushes wait for an app this instance has no APNs key for; another instance with the key sends them",
                        metadata: ["count": "\(depth.unsignable)", "apps": "\(keyring.apps.map { $0.sorted().map(\.description).joined(separator: ",") } ?? "all")"])
                } else if depth.unsignable == 0, waitingForKey > 0 {
                    logger.info("no push waits for a key this instance lacks any more")
                }
                waitingForKey = depth.unsignable
            },
            prune: { now in try await store.prune(olderThan: configuration.retention, now: now) })
    }
}
