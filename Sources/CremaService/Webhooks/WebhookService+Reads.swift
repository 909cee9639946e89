public import CremaStore
public import CremaCore
public import Foundation

/// What a caller reads of its webhook endpoints: every read is bounded by the caller's scope, so an endpoint outside
/// it reads as one that does not exist.
extension WebhookService {
    /// The data a key's webhook requests reach: a POS key its scope (a key limited to some stores registers for those
    /// stores and sees only endpoints within them), an admin key its tenant, the bootstrap admin key `default`.
    public static func scope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        switch principal.role {
        case .pos:
            guard let scope = principal.scope else { throw .forbidden(role: principal.role, allowed: [.pos, .admin]) }
            return scope
        case .admin:
            return TenantScope(tenant: principal.tenant ?? TenantScope.defaultTenantName)
        case .barista, .dashboard, .app, .system:
            throw .forbidden(role: principal.role, allowed: [.pos, .admin])
        }
    }

    public func endpoints(in scope: TenantScope) async throws(StoreError) -> [StoredWebhookEndpoint] {
        try await database.webhooks.endpoints(in: scope)
    }

    /// Nil when no endpoint with this id is in `scope`.
    public func endpoint(id: UUID, in scope: TenantScope) async throws(StoreError) -> StoredWebhookEndpoint? {
        try await database.webhooks.endpoint(id: id, in: scope)
    }

    /// False when no endpoint with this id is in `scope`.
    public func delete(id: UUID, in scope: TenantScope) async throws(StoreError) -> Bool {
        try await database.webhooks.delete(id: id, in: scope)
    }

    /// The endpoint's deliveries, newest first, before the delivery id `before`; nil when no endpoint with this id is
    /// in `scope`.
    public func deliveries(endpoint: UUID, in scope: TenantScope, limit: Int, before: Int64?) async throws(StoreError) -> [WebhookDeliveryRecord]? {
        try await database.webhooks.deliveries(endpoint: endpoint, in: scope, limit: limit, before: before)
    }
}
