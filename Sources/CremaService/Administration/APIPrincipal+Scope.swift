import CremaCore
import CremaCredentials

extension APIPrincipal {
    /// The data this key reaches for something only `roles` may do: `forbidden` for another role, and for the bootstrap
    /// admin key, which reaches no tenant's orders. The one rule behind each service's named check (`readerScope(of:)`
    /// and its kin), internal so that the role sets stay in the services, beside the reads and writes they guard.
    func scope(among roles: Set<Role>) throws(ServiceError) -> TenantScope {
        guard roles.contains(role), let scope else { throw .forbidden(role: role, allowed: roles) }
        return scope
    }
}
