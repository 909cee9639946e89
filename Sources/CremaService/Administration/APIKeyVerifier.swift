public import CremaClock
public import CremaStore
public import Foundation
import Synchronization

/// Checks keys Crema generated against their stored hashes: one indexed read by the key's public id, then a
/// constant-time comparison. Keys from the environment never reach it. What was read is kept for `freshFor`
/// (`APIKeyCache`), so a flood of requests, refused ones included, costs the database one read per key and period.
public struct APIKeyVerifier: Sendable {
    let keys: APIKeyRepository
    let cache: APIKeyCache
    let clock: CremaClock

    public init(keys: APIKeyRepository, cache: APIKeyCache = APIKeyCache(), clock: CremaClock) {
        self.keys = keys
        self.cache = cache
        self.clock = clock
    }

    /// The key's principal; nil when it is not a key Crema issued; a refusal when it expired or was revoked.
    public func verify(_ presented: Substring) async throws -> Result<APIPrincipal, APIKeyRefusal>? {
        guard let id = APIKeySecret.id(of: presented) else { return nil }
        let at = clock.now
        let stored: StoredAPIKey?
        if let cached = cache.lookup(id, at: at) {
            stored = cached
        } else {
            stored = try await keys.key(id: id)
            cache.remember(id, stored, at: at)
        }
        guard let stored, APIKeySecret.matches(stored.hash, APIKeySecret.hash(presented)) else { return nil }
        if stored.revokedAt != nil { return .failure(.revoked) }
        if let expiry = stored.expiresAt, expiry <= at { return .failure(.expired) }
        return .success(APIPrincipal(role: stored.role, tenant: stored.tenant, stores: stored.stores.map(Set.init), keyID: stored.id))
    }
}

/// Generated keys as last read, by public id (an unknown id too, as nil), for `freshFor` seconds. A key revoked
/// through this process is forgotten at once; another process's revocation is seen within `freshFor`.
public final class APIKeyCache: Sendable {
    /// How long a read is used.
    public static let freshFor: TimeInterval = 5
    /// Ids remembered at once; past it the cache starts over.
    static let capacity = 10_000

    private let entries = Mutex<[String: (key: StoredAPIKey?, at: Date)]>([:])

    public init() {}

    /// The key as read within `freshFor` of `now` (`.some(nil)`: read, and unknown); nil when it must be read.
    func lookup(_ id: String, at now: Date) -> StoredAPIKey?? {
        entries.withLock { entries in
            guard let entry = entries[id], now >= entry.at, now.timeIntervalSince(entry.at) < Self.freshFor else { return nil }
            return .some(entry.key)
        }
    }

    func remember(_ id: String, _ key: StoredAPIKey?, at now: Date) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[id] = (key, now)
        }
    }

    /// Forgets a key this process changed (revoked), so its next use is read again.
    public func forget(_ id: String) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}
