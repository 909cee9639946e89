public import CremaStore
public import CremaClock
public import CremaCore

/// What an administrator reads and the limits only the operator sets. The routes check which tenant a key
/// administers (`APIPrincipal`); these read within the tenant they are given.
extension AdminService {
    /// Every tenant, or only `only` (a tenant's own admin key sees its tenant alone).
    public func tenants(only: String?) async throws(StoreError) -> [TenantRecord] {
        try await database.tenants.tenants(only: only)
    }

    /// Nil when there is no such tenant.
    public func tenant(id: String) async throws(StoreError) -> TenantRecord? {
        try await database.tenants.tenant(id: id)
    }

    public func apps(tenant: String) async throws(StoreError) -> [AppRecord] {
        try await database.tenants.apps(tenant: tenant)
    }

    /// The tenant's APNs keys, without their secrets.
    public func apnsKeys(tenant: String) async throws(StoreError) -> [StoredAPNsKey] {
        try await database.apnsKeys.keys(tenant: tenant)
    }

    /// The tenant's generated API keys, without their secrets.
    public func apiKeys(tenant: String) async throws(StoreError) -> [StoredAPIKey] {
        try await database.apiKeys.keys(tenant: tenant)
    }

    /// The tenant's own load limits (docs/limits.md); nil when it has none beyond the operator's defaults.
    public func limitOverrides(tenant: String) async throws(StoreError) -> TenantLimitOverrides? {
        try await database.limits.overrides(tenant: tenant)
    }

    /// Replaces the tenant's own load limits.
    public func putLimits(_ overrides: TenantLimitOverrides, tenant: String) async throws(StoreError) {
        try await database.limits.put(overrides, tenant: tenant, at: clock.now)
    }

    /// Creates or renames stores with the rules every caller shares.
    public var stores: StoreService { StoreService(stores: database.stores) }

    /// Where every tenant's customer token settings are read from.
    public var customerTokenSettingsSource: any CustomerTokenSettingsSource { database.customerTokenSettings }

    /// Verifies generated API keys against the store, remembering each for a few seconds in `cache`.
    public func apiKeyVerifier(cache: APIKeyCache, clock: CremaClock) -> APIKeyVerifier {
        APIKeyVerifier(keys: database.apiKeys, cache: cache, clock: clock)
    }
}
