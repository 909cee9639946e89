import CremaService
import CremaAPI
import CremaAPNsProtocol
import CremaClock
import CremaCore
import Foundation
import HTTPTypes
import Hummingbird

/// The order routes of docs/design.md §9: place, apply events, read one, list, all under `/v1/orders`.
struct OrderRoutes {
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.post("/v1/orders") { request, context in try await self.place(request, context) }
        router.get("/v1/orders") { request, context in try await self.list(request, context) }
        router.get("/v1/orders/{id}") { request, context in try await self.show(request, context) }
        router.post("/v1/orders/{id}/events") { request, context in try await self.event(request, context) }
        router.get("/v1/orders/{id}/preview") { request, context in try await self.preview(request, context) }
        router.get("/v1/orders/{id}/deliveries") { request, context in try await self.deliveries(request, context) }
    }

    func place(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let caller = try context.authorize(OrderEventType.placed.permittedRoles)
        let key = try Self.idempotencyKey(request)
        let body = try WireCoding.decode(PlaceOrderRequest.self, from: try await request.bodyData(context: context))
        let identity = IdempotentRequest(scope: caller.role.rawValue, key: key, path: "POST /v1/orders", body: body.canonicalJSON())
        let response = try await service.place(body.placement, in: caller.scope, role: caller.role, request: identity)
        return Self.respond(response)
    }

    func event(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        // Both writer roles reach the route (`OrderService.eventSenders`); which events each may send is the core's rule.
        let principal = try context.presentedKey()
        let scope = try OrderService.eventSenderScope(of: principal)
        let id = try Self.orderID(context)
        let key = try Self.idempotencyKey(request)
        let body = try WireCoding.decode(OrderEventRequest.self, from: try await request.bodyData(context: context))
        let event = try body.event()
        _ = try context.authorize(event.type.permittedRoles)
        let identity = IdempotentRequest(
            scope: principal.role.rawValue, key: key, path: "POST /v1/orders/\(id.uuidString.lowercased())/events",
            body: body.canonicalJSON())
        let response = try await service.apply(
            event, to: id, in: scope, expectedVersion: body.expectedVersion, role: principal.role, request: identity)
        return Self.respond(response)
    }

    func show(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.readerScope(of: try context.presentedKey())
        guard let detail = try await service.order(id: try Self.orderID(context), in: scope) else {
            throw APIError.unknownOrder
        }
        return try JSONResponse.make(.ok, OrderResponse(detail.order, events: detail.events, projection: .some(detail.projection)))
    }

    /// What every surface shows for the order now, and what the delivery planner sends for its last change, made now:
    /// to the order's own tokens and to a token of each kind (`OrderService.preview`).
    func preview(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.readerScope(of: try context.presentedKey())
        guard let preview = try await service.preview(orderID: try Self.orderID(context), in: scope) else {
            throw APIError.unknownOrder
        }
        return try JSONResponse.make(.ok, try OrderPreview(preview))
    }

    /// Every delivery decision for the order, skips included, with what APNs answered.
    func deliveries(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.readerScope(of: try context.presentedKey())
        let id = try Self.orderID(context)
        guard let log = try await service.deliveries(orderID: id, in: scope) else { throw APIError.unknownOrder }
        return try JSONResponse.make(.ok, DeliveriesResponse(orderID: id, deliveries: log.map(DeliveryResponse.init)))
    }

    func list(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.readerScope(of: try context.presentedKey())
        let query = request.uri.queryParameters
        guard let storeID = query.get("store") else { throw APIError.invalidField(field: "store", reason: "is required") }
        guard StoreID.isValid(storeID) else {
            throw APIError.invalidField(field: "store", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
        var state: OrderState?
        if let text = query.get("state") {
            guard let parsed = OrderState(rawValue: text) else {
                throw APIError.invalidField(field: "state", reason: "must be one of \(OrderState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            state = parsed
        }
        var limit = 50
        if let text = query.get("limit") {
            guard let parsed = Int(text), (1...OrderService.maxPageSize).contains(parsed) else {
                throw APIError.invalidField(field: "limit", reason: "must be an integer from 1 to \(OrderService.maxPageSize)")
            }
            limit = parsed
        }
        let page = try await service.orders(store: storeID, in: scope, state: state, limit: limit, cursor: query.get("cursor"))
        return try JSONResponse.make(.ok, OrderPageResponse(orders: page.orders.map { OrderResponse($0) }, nextCursor: page.nextCursor))
    }

    // MARK: - Helpers

    static func respond(_ response: CommandResponse) -> Response {
        JSONResponse.make(
            HTTPResponse.Status(code: response.status), raw: response.body,
            headers: response.replayed ? [HTTPField.Name("Idempotent-Replayed")!: "true"] : [:])
    }

    static func orderID(_ context: CremaRequestContext) throws(APIError) -> UUID {
        guard let id = UUID(uuidString: try context.pathParameter("id")) else {
            throw .invalidField(field: "id", reason: "must be an order id (a UUID)")
        }
        return id
    }

    /// 1–255 printable ASCII characters, space included (0x20–0x7E), as the error text and the document say.
    /// HTTP drops spaces around a field value, so they are never part of a key.
    static func idempotencyKey(_ request: Request) throws(APIError) -> String {
        guard let key = request.headers[HTTPField.Name("Idempotency-Key")!], (1...255).contains(key.utf8.count),
            key.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
        else { throw .missingIdempotencyKey }
        return key
    }
}

extension DeliveryResponse {
    /// The store's typed log entry in the API's words: each typed field as its raw value, the `apns-id` lowercase.
    init(_ entry: DeliveryLogEntry) {
        self.init(
            id: entry.id, orderVersion: entry.orderVersion, orderEvent: entry.orderEvent?.rawValue, targetKind: entry.targetKind?.rawValue,
            token: entry.token, pushType: entry.pushType?.rawValue, liveActivityEvent: entry.liveActivityEvent?.rawValue,
            priority: entry.priority, collapseID: entry.collapseID, state: entry.state.rawValue, reasonCode: entry.reasonCode,
            reason: entry.reason, attempts: entry.attempts, apnsStatus: entry.apnsStatus, apnsReason: entry.apnsReason,
            apnsID: entry.apnsID?.uuidString.lowercased(), plannedAt: entry.plannedAt, notBefore: entry.notBefore,
            expiresAt: entry.expiresAt, sentAt: entry.sentAt, finishedAt: entry.finishedAt, receivedAt: entry.receivedAt,
            receiptSurface: entry.receiptSurface?.rawValue)
    }
}
