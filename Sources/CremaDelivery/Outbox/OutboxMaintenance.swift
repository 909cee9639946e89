import CremaClock
import Foundation
import Logging

/// The upkeep every outbox worker runs beside its claims, written once so the APNs and webhook dispatchers cannot
/// drift: rows whose lease ran out go back to be claimed, the depth gauges are set, and finished rows are pruned every
/// ten minutes, each tick on the worker's clock. A tick that fails is logged and the next one tries again.
struct OutboxMaintenance: Sendable {
    /// What the rows are called in the log ("deliveries", "webhook deliveries").
    let rows: String
    let interval: Duration
    let clock: CremaClock
    let logger: Logger

    /// Seconds of the worker's clock between two prunes.
    static let pruneInterval: TimeInterval = 600

    /// Ticks until the task is cancelled. `rescue` returns how many rows came back, `gauge` sets the gauges (and does
    /// the worker's own per-tick work), `prune` returns how many finished rows it removed; each is given the tick's time.
    func run(
        rescue: (Date) async throws -> Int, gauge: (Date) async throws -> Void, prune: (Date) async throws -> Int
    ) async {
        var lastPrune: Date?
        while !Task.isCancelled {
            do {
                let now = clock.now
                let rescued = try await rescue(now)
                if rescued > 0 { logger.warning("rescued \(rows) whose lease expired", metadata: ["count": "\(rescued)"]) }
                try await gauge(now)
                if lastPrune.map({ now.timeIntervalSince($0) >= Self.pruneInterval }) ?? true {
                    let pruned = try await prune(now)
                    if pruned > 0 { logger.info("pruned finished \(rows)", metadata: ["count": "\(pruned)"]) }
                    lastPrune = now
                }
            } catch {
                logger.debug("outbox maintenance failed", metadata: ["rows": "\(rows)", "error": "\(error)"])
            }
            try? await clock.sleep(for: interval)
        }
    }
}
