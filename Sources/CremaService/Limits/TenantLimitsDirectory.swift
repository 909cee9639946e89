public import CremaClock
public import CremaCore
public import CremaStore
import CremaPostgres
public import Foundation
import Synchronization

/// The limits in force for each tenant: the operator's defaults with the tenant's own values over them, read from the
/// database at most once per `freshFor` per tenant (one read at a time: callers that arrive during a read wait for it),
/// and at once after this process changed them. Other processes see a change within `freshFor`.
public final class TenantLimitsDirectory: Sendable {
    /// The operator's defaults (`CREMA_LIMIT_*`, `CREMA_RATE_LIMIT`).
    public let defaults: TenantLimits
    public let repository: TenantLimitsRepository
    /// The clock the cache (and whoever stamps a change of limits) reads.
    public let clock: CremaClock

    /// How long a tenant's limits are used before they are read again.
    public static let freshFor: TimeInterval = 10
    /// Tenants remembered at once; past it the cache starts over (each tenant costs one read to come back).
    static let capacity = 10_000

    private enum Entry {
        case loaded(TenantLimits, at: Date)
        case loading(Task<TenantLimitOverrides?, any Error>)
    }

    private let entries = Mutex<[String: Entry]>([:])

    public init(defaults: TenantLimits, repository: TenantLimitsRepository, clock: CremaClock) {
        self.defaults = defaults
        self.repository = repository
        self.clock = clock
    }

    /// The limits in force for `tenant`.
    public func limits(for tenant: String) async throws(StoreError) -> TenantLimits {
        let at = clock.now
        let repository = self.repository
        enum Found {
            case ready(TenantLimits)
            case pending(Task<TenantLimitOverrides?, any Error>)
        }
        let found: Found = entries.withLock { entries in
            switch entries[tenant] {
            case .loaded(let limits, let loadedAt) where at.timeIntervalSince(loadedAt) < Self.freshFor && at >= loadedAt:
                return .ready(limits)
            case .loading(let task):
                return .pending(task)
            default:
                if entries.count >= Self.capacity { entries.removeAll() }
                let task = Task<TenantLimitOverrides?, any Error> { try await repository.overrides(tenant: tenant) }
                entries[tenant] = .loading(task)
                return .pending(task)
            }
        }
        let task: Task<TenantLimitOverrides?, any Error>
        switch found {
        case .ready(let limits): return limits
        case .pending(let pending): task = pending
        }
        // Only this read's own entry is replaced: a `forget` during the read may have started a newer one.
        func isThisRead(_ entry: Entry?) -> Bool {
            if case .loading(let current) = entry { return current == task }
            return false
        }
        do {
            let overrides = try await task.value
            let limits = defaults.overridden(by: overrides ?? TenantLimitOverrides())
            entries.withLock { entries in
                if isThisRead(entries[tenant]) { entries[tenant] = .loaded(limits, at: clock.now) }
            }
            return limits
        } catch {
            entries.withLock { entries in
                if isThisRead(entries[tenant]) { entries[tenant] = nil }
            }
            if let error = error as? StoreError { throw error }
            throw .database(PostgresError(.server, detail: "\(error)"))
        }
    }

    /// The limits last read for `tenant`, however old, without reading them: nil when none were read yet (or they are
    /// being read for the first time). For what must cost no round trip, such as an order command's share of the pool.
    public func lastRead(for tenant: String) -> TenantLimits? {
        entries.withLock { entries in
            if case .loaded(let limits, _) = entries[tenant] { return limits }
            return nil
        }
    }

    /// Forgets what was read for `tenant`, after this process changed its limits.
    public func forget(_ tenant: String) {
        _ = entries.withLock { $0.removeValue(forKey: tenant) }
    }
}
