import CremaClock
import Foundation

/// The lease ids of a worker's claims that failed. A claim can commit and still fail for the worker (the connection
/// broke before its answer came back, as when the primary dies): its rows are then in flight under a lease nobody
/// will send or record. The worker took the id before claiming, so once the database answers again it takes those
/// rows back (`DeliveryRepository.release(leases:)`) instead of leaving them to wait out the lease. An id older than
/// the lease is dropped: its rows are rescued like any expired lease by then.
struct LostClaims: Sendable {
    private let lease: TimeInterval
    private var claims: [(id: UUID, at: Date)] = []

    init(lease: Duration) {
        self.lease = lease.timeInterval
    }

    var isEmpty: Bool { claims.isEmpty }

    /// A claim made at `at` (the time its lease counts from) whose answer never came.
    mutating func add(_ id: UUID, at: Date) {
        claims.removeAll { at.timeIntervalSince($0.at) > lease }
        claims.append((id, at))
    }

    /// The ids whose lease may still hold rows at `now`.
    func ids(at now: Date) -> [UUID] {
        claims.filter { now.timeIntervalSince($0.at) <= lease }.map(\.id)
    }

    mutating func removeAll() { claims.removeAll() }
}
