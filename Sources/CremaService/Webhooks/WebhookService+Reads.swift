public import CremaStore
public import CremaCore
public import Foundation

/// What a caller reads of its webhook endpoints: every read is bounded by the caller's scope, so an endpoint outside
/// it reads as one that does not exist.
extension WebhookService {
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
