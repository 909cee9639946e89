import CremaAPI
import CremaCore
import CremaService
import Foundation
import Hummingbird
import Logging

/// The webhook routes (docs/webhooks.md), roles `pos` and `admin`: register (the secret is shown once), list, read,
/// delete, an endpoint's delivery log, and the replay of a dead delivery. A key limited to some stores registers for
/// those stores and sees only endpoints within them; the bootstrap admin key acts on the tenant `default`.
struct WebhookRoutes {
    let webhooks: WebhookService

    func register(on router: Router<CremaRequestContext>) {
        router.post("/v1/webhooks") { request, context in try await self.create(request, context) }
        router.get("/v1/webhooks") { request, context in try await self.list(request, context) }
        router.get("/v1/webhooks/{id}") { request, context in try await self.show(request, context) }
        router.delete("/v1/webhooks/{id}") { request, context in try await self.delete(request, context) }
        router.get("/v1/webhooks/{id}/deliveries") { request, context in try await self.deliveries(request, context) }
        router.post("/v1/webhooks/{id}/deliveries/{delivery}/replay") { request, context in try await self.replay(request, context) }
    }

    func create(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (principal, scope) = try Self.caller(context)
        let body = try WireCoding.decode(WebhookCreateRequest.self, from: try await request.bodyData(context: context))
        return try await IdempotentPOST.run(
            request, logger: context.logger, gate: webhooks.idempotency, principal: principal, tenant: scope.tenant, body: body
        ) {
            let (endpoint, secret) = try await webhooks.register(url: body.url, events: body.events, in: scope)
            context.logger.info(
                "webhook registered",
                metadata: ["webhook": "\(endpoint.id.uuidString.lowercased())", "events": "\(endpoint.events.map(\.rawValue).joined(separator: ","))"])
            return (
                .created, try WireCoding.canonical(WebhookEndpointResponse(endpoint, secret: secret)), try WireCoding.canonical(WebhookEndpointResponse(endpoint))
            )
        }
    }

    func list(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (_, scope) = try Self.caller(context)
        let endpoints = try await webhooks.endpoints(in: scope)
        return try JSONResponse.make(.ok, WebhookEndpointListResponse(webhooks: endpoints.map { WebhookEndpointResponse($0) }))
    }

    func show(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (_, scope) = try Self.caller(context)
        guard let endpoint = try await webhooks.endpoint(id: try Self.id(context), in: scope) else { throw APIError.unknownWebhook }
        return try JSONResponse.make(.ok, WebhookEndpointResponse(endpoint))
    }

    func delete(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (_, scope) = try Self.caller(context)
        let id = try Self.id(context)
        guard try await webhooks.delete(id: id, in: scope) else { throw APIError.unknownWebhook }
        context.logger.info("webhook deleted", metadata: ["webhook": "\(id.uuidString.lowercased())"])
        return Response(status: .noContent)
    }

    func deliveries(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (_, scope) = try Self.caller(context)
        let query = request.uri.queryParameters
        var limit = 50
        if let text = query.get("limit") {
            guard let parsed = Int(text), (1...200).contains(parsed) else {
                throw APIError.invalidField(field: "limit", reason: "must be an integer from 1 to 200")
            }
            limit = parsed
        }
        var before: Int64?
        if let text = query.get("before") {
            guard let parsed = Int64(text), parsed > 0 else { throw APIError.invalidField(field: "before", reason: "must be a delivery id") }
            before = parsed
        }
        guard let log = try await webhooks.deliveries(endpoint: try Self.id(context), in: scope, limit: limit, before: before) else {
            throw APIError.unknownWebhook
        }
        let max = webhooks.policy.retry.maxAttempts
        return try JSONResponse.make(
            .ok, WebhookDeliveryListResponse(deliveries: log.map { WebhookDeliveryResponse($0, maxAttempts: max) }, nextBefore: log.count == limit ? log.last?.id : nil))
    }

    func replay(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (principal, scope) = try Self.caller(context)
        let id = try Self.id(context)
        let deliveryText = try context.pathParameter("delivery")
        guard let delivery = Int64(deliveryText), delivery > 0 else { throw APIError.invalidField(field: "delivery", reason: "must be a delivery id") }
        return try await IdempotentPOST.run(
            request, logger: context.logger, gate: webhooks.idempotency, principal: principal, tenant: scope.tenant, body: [String: String]()
        ) {
            let record = try await webhooks.replay(delivery: delivery, endpoint: id, in: scope)
            context.logger.info("webhook delivery replayed", metadata: ["webhook": "\(id.uuidString.lowercased())", "delivery": "\(delivery)"])
            let answer = try WireCoding.canonical(WebhookDeliveryResponse(record, maxAttempts: webhooks.policy.retry.maxAttempts))
            return (.accepted, answer, answer)
        }
    }

    // MARK: - Helpers

    /// The caller and the data it reaches, by the service's rule (`WebhookService.scope(of:)`).
    static func caller(_ context: CremaRequestContext) throws -> (APIPrincipal, TenantScope) {
        let principal = try context.presentedKey()
        return (principal, try WebhookService.scope(of: principal))
    }

    static func id(_ context: CremaRequestContext) throws(APIError) -> UUID {
        let text = try context.pathParameter("id")
        guard let id = UUID(uuidString: text) else { throw .invalidField(field: "id", reason: "must be a webhook id (a UUID)") }
        return id
    }
}

// The webhook records the service answers with, in the API's words.

extension WebhookEndpointResponse {
    init(_ endpoint: StoredWebhookEndpoint, secret: String? = nil) {
        self.init(
            id: endpoint.id.uuidString.lowercased(), url: endpoint.url, events: endpoint.events.map(\.rawValue), stores: endpoint.stores,
            createdAt: endpoint.createdAt, disabledAt: endpoint.disabledAt, disabledReason: endpoint.disabledReason, secret: secret)
    }
}

extension WebhookDeliveryResponse {
    init(_ record: WebhookDeliveryRecord, maxAttempts: Int) {
        self.init(
            id: record.id, eventID: record.eventID.uuidString.lowercased(), eventType: record.eventType,
            orderID: record.orderID?.uuidString.lowercased(), state: record.state, attempts: record.attempts, maxAttempts: maxAttempts,
            replays: record.replays, lastStatus: record.lastStatus, lastError: record.lastError, createdAt: record.createdAt,
            nextAttemptAt: record.nextAttemptAt, sentAt: record.sentAt, finishedAt: record.finishedAt)
    }
}
