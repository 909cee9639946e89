import CremaAPNsProtocol
import CremaService
import CremaAPI
import CremaCore
import Foundation
import Hummingbird

/// `PUT /v1/stores/{store}` and `GET /v1/stores/{store}/board`.
struct StoreRoutes {
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.put("/v1/stores/{store}") { request, context in try await self.put(request, context) }
        router.get("/v1/stores/{store}/board") { request, context in try await self.board(request, context) }
        router.get("/v1/stores/{store}/funnel") { request, context in try await self.funnel(request, context) }
    }

    /// `since` is required: a funnel over all of the outbox's retention would be a different question each hour.
    func funnel(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.funnelScope(of: try context.presentedKey())
        let store = try Self.storeID(context)
        guard let text = request.uri.queryParameters.get("since"), let since = WireCoding.parseRFC3339(text) else {
            throw APIError.invalidField(field: "since", reason: "must be an RFC 3339 timestamp")
        }
        let funnel = try await service.funnel(store: store, since: since, in: scope)
        return try JSONResponse.make(.ok, FunnelResponse(funnel))
    }

    func put(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try StoreService.writerScope(of: try context.presentedKey())
        let id = try Self.storeID(context)
        // A key limited to some stores may not create or rename others (it may not see them either: 403 for all).
        guard scope.includes(store: id) else { throw APIError.storeNotPermitted(id) }
        let body = try WireCoding.decode(StorePutRequest.self, from: try await request.bodyData(context: context))
        let (saved, created) = try await service.stores.put(id: id, body.definition, tenant: scope.tenant)
        return try JSONResponse.make(created ? .created : .ok, StoreResponse(saved))
    }

    func board(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.readerScope(of: try context.presentedKey())
        let board = try await service.board(store: try Self.storeID(context), in: scope)
        return try JSONResponse.make(.ok, BoardResponse(store: board.store, columns: board.columns))
    }

    static func storeID(_ context: CremaRequestContext) throws(APIError) -> String {
        let id = try context.pathParameter("store")
        guard StoreID.isValid(id) else {
            throw .invalidField(field: "store", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
        return id
    }
}

extension StorePutRequest {
    /// The body as the service's command (`StoreService.put`).
    var definition: StoreDefinition {
        StoreDefinition(
            name: name, timezone: timezone, readyExpiryMinutes: readyExpiryMinutes, queuedExpiryMinutes: queuedExpiryMinutes, location: location)
    }
}

extension FunnelResponse {
    /// The store's funnel in the API's words: every surface present in `received`, 0 when none.
    init(_ funnel: PushFunnel) {
        self.init(
            since: funnel.since,
            pushTypes: funnel.steps.map { step in
                Step(
                    pushType: step.pushType.rawValue, event: step.liveActivityEvent?.rawValue, planned: step.planned, sent: step.sent,
                    accepted: step.accepted,
                    received: Dictionary(uniqueKeysWithValues: ReceiptSurface.allCases.map { ($0.rawValue, step.received[$0] ?? 0) }),
                    receiptSeconds: Percentiles(p50: step.receiptSecondsP50, p99: step.receiptSecondsP99))
            })
    }
}
