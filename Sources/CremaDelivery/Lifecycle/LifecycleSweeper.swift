public import CremaClock
public import CremaService
import CremaCore
public import CremaStore
import Foundation
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
    let clock: CremaClock
    let logger: Logger
    let metrics: LifecycleMetrics
    /// Orders whose close failed, left out of the scans for a while.
    let quarantine: SweepQuarantine

    public var description: String { "LifecycleSweeper" }

    public init(
        service: OrderService, retentionDays: Int, interval: Duration = .seconds(30), batchSize: Int = 200,
        clock: CremaClock, registry: PrometheusCollectorRegistry = .init(), logger: Logger
    ) {
        metrics = LifecycleMetrics(registry: registry)
        quarantine = SweepQuarantine(firstWait: TimeInterval(interval.components.seconds))
        self.service = service
        self.retentionDays = retentionDays
        self.interval = interval
        self.batchSize = batchSize
        self.clock = clock
        self.logger = logger
    }

    /// One pass of each kind at the clock's now: expiry, then retention, each whatever the other did. A pass that
    /// cannot read its work (the database is down) throws, after the other pass ran.
    public func sweep() async throws(StoreError) -> Sweep {
        var expiry: Result<Int, StoreError>
        do throws(StoreError) { expiry = .success(try await expire()) } catch { expiry = .failure(error) }
        let scrubbed = try await retain()
        return Sweep(expired: try expiry.get(), scrubbed: scrubbed)
    }

    /// Closes every overdue order found at the clock's now once (the close re-checks under the order's lock and by its
    /// version, so an order another process closed or a barista moved on is left alone). An order whose close fails is logged
    /// with its id, counted, and left out of the scans for a while (`SweepQuarantine`): the others are closed anyway.
    public func expire() async throws(StoreError) -> Int {
        let at = clock.now
        var expired = 0
        let overdueOrders: [LifecycleRepository.OverdueOrder]
        do throws(StoreError) {
            overdueOrders = try await service.database.lifecycle.overdue(now: at, limit: batchSize, excluding: quarantine.excluded(at: at))
        } catch {
            metrics.failed(.expiry)
            throw error
        }
        for overdue in overdueOrders {
            let id = overdue.order.id
            do throws(StoreError) {
                // A replay is another process's close, counted and logged there.
                let replayed = try await service.expire(overdue).replayed
                quarantine.cleared(id)
                guard !replayed else { continue }
                expired += 1
                metrics.expired(overdue.reason)
                logger.info(
                    "order expired", metadata: ["order_id": "\(id)", "store_id": "\(overdue.order.storeID)", "reason": "\(overdue.reason.rawValue)"])
            } catch .rejected(let refusal) {
                // Moved on since the scan (picked up, started, closed by another process): nothing to do.
                quarantine.cleared(id)
                logger.debug("order no longer overdue", metadata: ["order_id": "\(id)", "code": "\(refusal.code)"])
            } catch {
                // Stopping (a shutdown, or a start that failed): the close met a closing pool, not this order's fault.
                if Task.isCancelled { throw error }
                metrics.failed(.expiry)
                let metadata: Logger.Metadata = ["order_id": "\(id)", "tenant": "\(overdue.tenant)", "code": "\(error.code)"]
                if quarantine.failed(id, at: at) {
                    logger.warning("could not close an overdue order; the sweep goes on and tries it again later", metadata: metadata)
                } else {
                    logger.debug("could not close an overdue order again", metadata: metadata)
                }
            }
        }
        return expired
    }

    /// Removes the personal data of orders ended longer ago than the retention period, tenant by tenant and batch by
    /// batch.
    public func retain() async throws(StoreError) -> Int {
        let at = clock.now
        let cutoff = at.addingTimeInterval(-TimeInterval(retentionDays) * 86_400)
        var scrubbed = 0
        do throws(StoreError) {
            for tenant in try await service.database.lifecycle.tenantsWithPersonalDataDue(endedBefore: cutoff) {
                while true {
                    let batch = try await service.database.lifecycle.removePersonalData(of: tenant, endedBefore: cutoff, now: at, limit: batchSize)
                    scrubbed += batch
                    if batch < batchSize { break }
                }
            }
        } catch {
            metrics.failed(.retention)
            if scrubbed > 0 { metrics.scrubbed(scrubbed) }
            throw error
        }
        if scrubbed > 0 {
            metrics.scrubbed(scrubbed)
            logger.info("personal data removed after retention", metadata: ["orders": "\(scrubbed)"])
        }
        return scrubbed
    }

    /// Expiry and retention each on their own loop, so a pass that keeps failing never holds up the other.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.repeatEvery(self.interval, pass: "expiry") { () async throws(StoreError) in _ = try await self.expire() } }
                group.addTask {
                    await self.repeatEvery(self.interval, pass: "retention") { () async throws(StoreError) in _ = try await self.retain() }
                }
                await group.waitForAll()
            }
        }
    }

    private func repeatEvery(_ interval: Duration, pass: String, _ body: () async throws(StoreError) -> Void) async {
        while !Task.isCancelled {
            do throws(StoreError) {
                try await body()
            } catch {
                // Stopping (a shutdown, or a start that failed): the pass met a closing pool, not a fault.
                if Task.isCancelled { break }
                logger.warning("lifecycle pass failed", metadata: ["pass": "\(pass)", "code": "\(error.code)"])
            }
            try? await clock.sleep(for: interval)
        }
    }
}
