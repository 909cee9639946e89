public import CremaCore

/// Who presented an API key: the role it grants and the data it reaches. Resolved once per request.
public struct APIPrincipal: Sendable, Hashable {
    public var role: Role
    /// nil only for the bootstrap admin key (`CREMA_ADMIN_KEY`), which administers every tenant.
    public var tenant: String?
    /// nil: every store of the tenant.
    public var stores: Set<String>?
    /// The generated key's public id, for logs; nil for keys from the environment.
    public var keyID: String?
    /// Which key this is, for what is counted per key (request rate, open streams): the generated key's id, or the
    /// position of a key from the environment. Never the secret.
    public var holder: String

    public init(role: Role, tenant: String?, stores: Set<String>? = nil, keyID: String? = nil, holder: String? = nil) {
        self.role = role
        self.tenant = tenant
        self.stores = stores
        self.keyID = keyID
        self.holder = holder ?? keyID.map { "key:\($0)" } ?? "configured:\(role.rawValue)"
    }

    /// The data this key reaches; nil for the bootstrap admin key, which reaches no orders.
    public var scope: TenantScope? { tenant.map { TenantScope(tenant: $0, stores: stores) } }

    /// Whether this key may administer `tenant`: the bootstrap key every tenant, a tenant's admin key its own.
    public func administers(_ tenant: String) -> Bool {
        role == .admin && (self.tenant == nil || self.tenant == tenant)
    }
}

/// Why a presented generated key was refused (a key Crema never issued is simply unknown: 401 `unauthorized`).
public enum APIKeyRefusal: Error, Sendable, Hashable {
    case expired
    case revoked
}
