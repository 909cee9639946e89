import CremaClock
import CremaStore
import Logging
import ServiceLifecycle

/// Deletes Idempotency-Keys older than the 24-hour window, every ten minutes. Correctness does not depend
/// on it (an expired key is reclaimed on use); it keeps the table small.
struct IdempotencyJanitor: Service, CustomStringConvertible {
    let idempotency: IdempotencyRepository
    let clock: CremaClock
    let logger: Logger
    var description: String { "IdempotencyJanitor" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let count = try await idempotency.pruneExpired()
                    if count > 0 { logger.info("pruned expired idempotency keys", metadata: ["count": "\(count)"]) }
                } catch {
                    if Task.isCancelled { break }  // stopping: the prune met a closing pool, not a fault
                    logger.warning("could not prune idempotency keys", metadata: ["error": "\(error)"])
                }
                try? await clock.sleep(for: .seconds(600))
            }
        }
    }
}
