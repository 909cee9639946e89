public import CremaAPI
public import CremaCore
public import Hummingbird

/// Per-request state: the caller's role once the bearer key is checked.
public struct CremaRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthenticationMiddleware` when a valid key was presented.
    public var role: Role?
    /// Set by `AuthenticationMiddleware` when a valid customer token (JWT) was presented.
    public var customer: CustomerIdentity?
    /// Why a presented customer token was refused; answered as 401 by whichever route asks for a caller.
    public var customerRefusal: CustomerTokenRefusal?

    public init(source: Source) {
        coreContext = .init(source: source)
        role = nil
        customer = nil
        customerRefusal = nil
    }

    /// Request bodies above this are refused with 413 before they are parsed.
    public var maxUploadSize: Int { 64 * 1024 }

    /// Requires one of `roles`: 401 without a valid key, 403 with a key of another role.
    public func authorize(_ roles: Set<Role>) throws(APIError) -> Role {
        if customer != nil { throw .customerForbidden }
        if let customerRefusal { throw .customerToken(customerRefusal) }
        guard let role else { throw .unauthorized }
        guard roles.contains(role) else { throw .forbidden(role: role, allowed: roles) }
        return role
    }
}

extension CremaRequestContext {
    /// Requires a verified customer token (the `/v1/me` routes): 401 with the refusal's code for a refused
    /// token, 403 for an API key, 401 without any credential.
    public func authorizeCustomer() throws(APIError) -> CustomerIdentity {
        if let customer { return customer }
        if let customerRefusal { throw .customerToken(customerRefusal) }
        if role != nil { throw .customerTokenRequired }
        throw .unauthorized
    }
}
