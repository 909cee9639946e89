public import CremaService
import CremaCore
public import CremaStore
public import Foundation
public import Logging
public import Prometheus
public import ServiceLifecycle

/// Ends what nobody will end: closes orders that waited past their store's limits (an `expired` event through
/// `OrderService`, so its Live Activity gets its `end` push like any other end) and removes personal data once the
/// retention period after an order's end has passed (docs/data-lifecycle.md). Time comes from the injected clock, so
/// a test moves it instead of waiting; `run()` only repeats `sweep()` every `interval`.
public struct LifecycleSweeper: Service, CustomStringConvertible {
    /// What one sweep did.
    public struct Sweep: Sendable, Hashable {
        /// Orders this sweep closed (a close replayed from another process is not counted).
        public var expired: Int
        /// Ended orders whose personal data this sweep removed.
        public var scrubbed: Int
    }

    let service: OrderService
    /// Days after an order's end before its personal data is removed (`CREMA_RETENTION_DAYS`).
    let retentionDays: Int
    let interval: Duration
    /// Orders handled per statement; a sweep repeats retention until a batch comes back short.
    let batchSize: Int
    let now: @Sendable () -> Date
    let logger: Logger
    let metrics: LifecycleMetrics

    public var description: String { "LifecycleSweeper" }

    public init(
        service: OrderService, retentionDays: Int, interval: Duration = .seconds(30), batchSize: Int = 200,
        now: @escaping @Sendable () -> Date = Date.init, registry: PrometheusCollectorRegistry = .init(), logger: Logger
    ) {
        metrics = LifecycleMetrics(registry: registry)
        self.service = service
        self.retentionDays = retentionDays
        self.interval = interval
        self.batchSize = batchSize
        self.now = now
        self.logger = logger
    }

    /// One pass at `now()`: every overdue order found is closed once (the close re-checks under the order's lock and
    /// by its version, so an order another process closed or a barista moved on is left alone), then retention.
    public func sweep() async throws(StoreError) -> Sweep {
        let at = now()
        let lifecycle = service.database.lifecycle
        var expired = 0
        for overdue in try await lifecycle.overdue(now: at, limit: batchSize) {
            do {
                // A replay is another process's close, counted and logged there.
                guard try await !service.expire(overdue).replayed else { continue }
                expired += 1
                metrics.expired(overdue.reason)
                logger.info(
                    "order expired",
                    metadata: ["order_id": "\(overdue.order.id)", "store_id": "\(overdue.order.storeID)", "reason": "\(overdue.reason.rawValue)"])
            } catch .rejected(let refusal) {
                // Moved on since the scan (picked up, started, closed by another process): nothing to do.
                logger.debug("order no longer overdue", metadata: ["order_id": "\(overdue.order.id)", "code": "\(refusal.code)"])
            }
        }
        let cutoff = at.addingTimeInterval(-TimeInterval(retentionDays) * 86_400)
        var scrubbed = 0
        while true {
            let batch = try await lifecycle.removePersonalData(endedBefore: cutoff, now: at, limit: batchSize)
            scrubbed += batch
            if batch < batchSize { break }
        }
        if scrubbed > 0 {
            metrics.scrubbed(scrubbed)
            logger.info("personal data removed after retention", metadata: ["orders": "\(scrubbed)"])
        }
        return Sweep(expired: expired, scrubbed: scrubbed)
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do throws(StoreError) {
                    _ = try await sweep()
                } catch {
                    // Stopping (a shutdown, or a start that failed): the sweep met a closing pool, not a fault.
                    if Task.isCancelled { break }
                    logger.warning("lifecycle sweep failed", metadata: ["code": "\(error.code)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
