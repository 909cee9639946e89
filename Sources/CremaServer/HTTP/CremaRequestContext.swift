public import CremaAPI
public import CremaCore
public import CremaService
public import Hummingbird

/// Per-request state: who the caller is once the bearer credential is checked.
public struct CremaRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthenticationMiddleware` when a valid API key was presented: its role, tenant and stores.
    public var principal: APIPrincipal?
    /// Why a generated API key that was presented is no longer accepted (expired, revoked).
    public var keyRefusal: APIKeyRefusal?
    /// Set by `AuthenticationMiddleware` when a valid customer token (JWT) was presented.
    public var customer: CustomerIdentity?
    /// Why a presented customer token was refused; answered as 401 by whichever route asks for a caller.
    public var customerRefusal: CustomerTokenRefusal?

    public init(source: Source) {
        coreContext = .init(source: source)
        principal = nil
        keyRefusal = nil
        customer = nil
        customerRefusal = nil
    }

    /// Request bodies above this are refused with 413 before they are parsed.
    public var maxUploadSize: Int { 64 * 1024 }

    /// Requires a key of one of `roles` (never `admin`): 401 without a valid key, 403 with a key of another role.
    /// The answer carries the data the key reaches, which every read and write is then filtered by.
    public func authorize(_ roles: Set<Role>) throws(APIError) -> TenantCaller {
        let principal = try presentedKey()
        guard roles.contains(principal.role), let scope = principal.scope else {
            throw .forbidden(role: principal.role, allowed: roles)
        }
        return TenantCaller(role: principal.role, scope: scope)
    }

    /// Requires an admin key that administers `tenant`: 403 for another role, 404 for another tenant's admin key
    /// (it may not know the tenant exists).
    public func authorizeAdmin(tenant: String) throws(APIError) -> APIPrincipal {
        let principal = try presentedKey()
        guard principal.role == .admin else { throw .forbidden(role: principal.role, allowed: [.admin]) }
        guard principal.administers(tenant) else { throw .unknownTenant(tenant) }
        return principal
    }

    /// Any valid API key, or the reason there is none.
    func presentedKey() throws(APIError) -> APIPrincipal {
        if customer != nil { throw .customerForbidden }
        if let customerRefusal { throw .customerToken(customerRefusal) }
        switch keyRefusal {
        case .expired: throw .apiKeyExpired
        case .revoked: throw .apiKeyRevoked
        case nil: break
        }
        guard let principal else { throw .unauthorized }
        return principal
    }
}

/// A caller of the shop's routes: its role, and the tenant and stores its key reaches.
public struct TenantCaller: Sendable, Hashable {
    public var role: Role
    public var scope: TenantScope
}

extension CremaRequestContext {
    /// Requires a verified customer token (the `/v1/me` routes): 401 with the refusal's code for a refused
    /// token, 403 for an API key, 401 without any credential.
    public func authorizeCustomer() throws(APIError) -> CustomerIdentity {
        if let customer { return customer }
        if let customerRefusal { throw .customerToken(customerRefusal) }
        if principal != nil { throw .customerTokenRequired }
        throw .unauthorized
    }
}
