public import CremaClock
import CremaCore
public import CremaService
public import CremaStore
import Foundation
public import Logging
public import Prometheus
public import ServiceLifecycle
import Synchronization

/// Sends webhook deliveries (docs/webhooks.md), apart from the APNs dispatcher so that no receiver can slow a push:
/// wakes on commits that queued webhook deliveries (1 s poll fallback), claims due deliveries with at most a few in
/// flight per endpoint, sends each as its own task, records each outcome as it comes back, rescues expired leases and
/// prunes. At least once: a crash between sending and recording sends again after the lease, with the same
/// `Crema-Event-Id`.
public struct WebhookDispatcher: Service, CustomStringConvertible {
    let store: WebhookRepository
    let sender: WebhookSender
    let clients: WebhookClients
    let changes: ChangeFeed?
    let configuration: WebhookDispatcherConfiguration
    /// Signatures, due times, leases, and the waits (the poll fallback, the maintenance tick): the root's clock, so a
    /// test moves time instead of waiting for it.
    let clock: CremaClock
    let logger: Logger
    let metrics: WebhookMetrics

    public var description: String { "WebhookDispatcher" }

    public init(
        service: WebhookService, changes: ChangeFeed?, configuration: WebhookDispatcherConfiguration = .init(), clock: CremaClock,
        registry: PrometheusCollectorRegistry, logger: Logger
    ) throws {
        self.metrics = WebhookMetrics(registry: registry)
        self.store = service.database.webhooks
        self.clients = try WebhookClients(
            trustRootsPEMFile: configuration.trustRootsPEMFile, connectTimeout: configuration.connectTimeout, logger: logger)
        self.sender = WebhookSender(
            service: service, clients: clients, policy: configuration.policy, clock: clock, random: configuration.random, logger: logger)
        self.changes = changes
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    public func run() async throws {
        let doorbell = Doorbell(clock: clock)
        let changes = self.changes?.subscribe(to: .webhooks)
        await withTaskGroup(of: Void.self) { group in
            if let changes {
                group.addTask {
                    for await _ in changes { await doorbell.ring() }
                }
            }
            group.addTask { await self.maintain() }
            await withGracefulShutdownHandler {
                await self.work(doorbell: doorbell)
            } onGracefulShutdown: {
                Task { await doorbell.ring() }
            }
            group.cancelAll()
        }
        await clients.shutdown()
        logger.info("webhook dispatcher stopped")
    }

    /// Claims into free room, sends each delivery as a child task that records its own outcome, and sleeps on the
    /// doorbell (rung by commits that queued deliveries and by finished sends) when there is nothing to claim. On
    /// graceful shutdown it stops claiming and lets the requests in flight finish (each bounded by the request
    /// timeout).
    func work(doorbell: Doorbell) async {
        let inFlight = InFlight()
        var failing = false
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                let room = configuration.capacity - inFlight.count.withLock { $0 }
                var claimedAll = false
                // The poll fallback counts from the claim's time (see `Dispatcher.work`).
                let claimedAt = clock.now
                if room > 0 {
                    do {
                        let claimed = try await store.claim(
                            limit: room, perEndpoint: configuration.policy.inFlightPerEndpoint, perTenant: configuration.tenantShare,
                            lease: configuration.policy.lease, now: claimedAt)
                        if failing {
                            logger.info("webhook dispatcher reconnected to the database")
                            failing = false
                        }
                        inFlight.count.withLock { $0 += claimed.count }
                        for delivery in claimed {
                            group.addTask {
                                await self.deliver(delivery)
                                inFlight.count.withLock { $0 -= 1 }
                                await doorbell.ring()
                            }
                        }
                        claimedAll = claimed.count == room
                    } catch {
                        // A claim interrupted by shutdown is not an outage.
                        if Task.isCancelled { break }
                        if !failing { logger.warning("webhook dispatcher cannot reach the database; retrying", metadata: ["error": "\(error)"]) }
                        failing = true
                    }
                }
                if !claimedAll { await doorbell.wait(timeout: configuration.pollInterval, from: claimedAt) }
            }
        }
    }

    func deliver(_ delivery: ClaimedWebhook) async {
        let outcome = await sender.send(delivery)
        let metadata: Logger.Metadata = [
            "webhook": "\(delivery.endpointID.uuidString.lowercased())", "delivery": "\(delivery.id)", "event_type": "\(delivery.eventType)",
            "attempt": "\(delivery.attempts)",
        ]
        metrics.attempt(outcome)
        switch outcome {
        case .sent: break
        case .retry(_, let status, let error):
            logger.info(
                "webhook attempt failed; trying again later",
                metadata: metadata.merging(["status": "\(status.map(String.init) ?? "-")", "error": "\(error)"]) { $1 })
        case .dead(_, let error):
            logger.warning("webhook delivery is dead; replay it once the receiver is fixed", metadata: metadata.merging(["error": "\(error)"]) { $1 })
        case .gone:
            logger.warning("webhook endpoint answered 410 Gone; it is disabled", metadata: metadata)
        }
        // Recorded even when the service is stopping: the request went out, and sending it again is worse than a late
        // record. A record that fails leaves the lease to bring the delivery back.
        do {
            try await Task { try await store.record(delivery, outcome, now: clock.now) }.value
        } catch {
            logger.error("could not record a webhook outcome; it is sent again after its lease", metadata: metadata.merging(["error": "\(error)"]) { $1 })
        }
    }

    /// Rescues expired leases every few seconds and prunes every ten minutes of the dispatcher's clock.
    func maintain() async {
        await OutboxMaintenance(rows: "webhook deliveries", interval: configuration.maintenanceInterval, clock: clock, logger: logger).run(
            rescue: { now in try await store.rescueExpiredLeases(now: now, maxAttempts: configuration.policy.retry.maxAttempts) },
            gauge: { now in
                let depth = try await store.depth(now: now)
                metrics.depth(pending: depth.pending, inflight: depth.inflight, dead: depth.dead, oldest: depth.oldest)
            },
            prune: { now in try await store.prune(olderThan: configuration.retention, now: now) })
    }
}

/// How many requests this process has out, shared by the claiming loop and the sends.
private final class InFlight: Sendable {
    let count = Mutex(0)
}
