public import CremaStore
public import Foundation

/// Checks keys Crema generated against their stored hashes: one indexed read by the key's public id, then a
/// constant-time comparison. Keys from the environment never reach it.
public struct APIKeyVerifier: Sendable {
    let keys: APIKeyRepository
    let now: @Sendable () -> Date

    public init(keys: APIKeyRepository, now: @escaping @Sendable () -> Date = Date.init) {
        self.keys = keys
        self.now = now
    }

    /// The key's principal; nil when it is not a key Crema issued; a refusal when it expired or was revoked.
    public func verify(_ presented: Substring) async throws -> Result<APIPrincipal, APIKeyRefusal>? {
        guard let id = APIKeySecret.id(of: presented), let stored = try await keys.key(id: id),
            APIKeySecret.matches(stored.hash, APIKeySecret.hash(presented))
        else { return nil }
        if stored.revokedAt != nil { return .failure(.revoked) }
        if let expiry = stored.expiresAt, expiry <= now() { return .failure(.expired) }
        return .success(APIPrincipal(role: stored.role, tenant: stored.tenant, stores: stored.stores.map(Set.init), keyID: stored.id))
    }
}
