import Synchronization

/// The channel ids one reconciliation found at APNs with no store using them; the next pass deletes those it finds
/// unused again. Remembering one pass keeps a channel created while a pass runs (kept in the database a moment after
/// APNs listed it) from being taken for an orphan.
final class OrphanSuspects: Sendable {
    private let ids = Mutex<Set<String>>([])

    var previous: Set<String> { ids.withLock { $0 } }

    func replace(with suspects: Set<String>) { ids.withLock { $0 = suspects } }
}
