/// Whose data a caller may read and change: one tenant, and in it every store or only some. Every read and
/// write of orders, tokens and deliveries is filtered by it, so another tenant's rows are simply not found.
public struct TenantScope: Sendable, Hashable {
    /// The tenant of everything configured by the single-app environment variables (docs/design.md §9.1).
    public static let defaultTenantName = "default"

    /// Every store of the default tenant: what the keys of `CREMA_API_KEYS` reach.
    public static let `default` = TenantScope(tenant: defaultTenantName)

    public var tenant: String
    /// nil: every store of the tenant.
    public var stores: Set<String>?

    public init(tenant: String, stores: Set<String>? = nil) {
        self.tenant = tenant
        self.stores = stores
    }

    /// Whether the scope reaches `store`.
    public func includes(store: String) -> Bool {
        stores?.contains(store) ?? true
    }

    /// The store list sorted, for SQL (`store_id = ANY(...)`) and for answers; nil means every store.
    public var sortedStores: [String]? { stores.map { $0.sorted() } }
}
