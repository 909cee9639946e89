import CremaStore
import Synchronization

/// Outcomes of sends that have come back and wait to be recorded: each send's task adds its own, and the worker
/// takes all of them at once, so a single statement records whatever finished while the last one ran.
final class FinishedSends: Sendable {
    private let results = Mutex<[DeliveryResult]>([])

    /// Adds an outcome; true when it is the first since the worker last took them, the one ring the worker needs.
    func add(_ result: DeliveryResult) -> Bool {
        results.withLock { results in
            results.append(result)
            return results.count == 1
        }
    }

    /// Puts back outcomes that could not be recorded, ahead of newer ones.
    func restore(_ earlier: [DeliveryResult]) {
        results.withLock { $0.insert(contentsOf: earlier, at: 0) }
    }

    func takeAll() -> [DeliveryResult] {
        results.withLock { results in
            defer { results.removeAll(keepingCapacity: true) }
            return results
        }
    }
}
