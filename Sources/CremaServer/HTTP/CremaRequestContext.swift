public import CremaAPI
public import CremaCore
public import Hummingbird

/// Per-request state: the caller's role once the bearer key is checked.
public struct CremaRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthenticationMiddleware` when a valid key was presented.
    public var role: Role?

    public init(source: Source) {
        coreContext = .init(source: source)
        role = nil
    }

    /// Request bodies above this are refused with 413 before they are parsed.
    public var maxUploadSize: Int { 64 * 1024 }

    /// Requires one of `roles`: 401 without a valid key, 403 with a key of another role.
    public func authorize(_ roles: Set<Role>) throws(APIError) -> Role {
        guard let role else { throw .unauthorized }
        guard roles.contains(role) else { throw .forbidden(role: role, allowed: roles) }
        return role
    }
}
