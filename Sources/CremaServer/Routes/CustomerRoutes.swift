import CremaAPI
import CremaAPNsProtocol
import CremaCore
import CremaService
import Foundation
import Hummingbird
import Logging

/// The customer's own routes (docs/design.md §9.1), for the iOS app and its widgets, authenticated by a customer
/// token. The customer is the token's `sub`, never a path segment; another customer's order or token
/// answers exactly like one that does not exist (404), because every query is scoped by customer in SQL.
struct CustomerRoutes {
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.get("/v1/me/orders") { request, context in try await self.orders(request, context) }
        router.get("/v1/me/orders/{id}") { request, context in try await self.order(request, context) }
        router.put("/v1/me/orders/{id}/live-activity-token") { request, context in try await self.putActivity(request, context) }
        router.put("/v1/me/tokens/{kind}/{token}") { request, context in try await self.putToken(request, context) }
        router.delete("/v1/me/tokens/{kind}/{token}") { request, context in try await self.deleteToken(request, context) }
        router.get("/v1/me/widget") { request, context in try await self.widget(request, context) }
        router.post("/v1/me/receipts") { request, context in try await self.postReceipts(request, context) }
    }

    /// Receipts need no Idempotency-Key: posting the same receipts again writes nothing and answers the same counts.
    func postReceipts(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let body = try WireCoding.decode(ReceiptsRequest.self, from: try await request.bodyData(context: context))
        guard body.receipts.count <= OrderService.receiptsPerRequest else {
            throw APIError.invalidField(field: "receipts", reason: "holds more than \(OrderService.receiptsPerRequest) receipts")
        }
        let posts = try body.receipts.enumerated().map { index, item in
            guard let surface = ReceiptSurface(rawValue: item.surface), ReceiptSurface.posted.contains(surface) else {
                throw APIError.invalidField(field: "receipts[\(index)].surface", reason: "is not one of notification, activity, app")
            }
            return OrderService.ReceiptPost(receipt: item.receipt, surface: surface, at: item.at)
        }
        let answer = try await service.recordReceipts(posts, customerRef: customer.ref, tenant: customer.tenant)
        return try JSONResponse.make(.accepted, ReceiptsResponse(accepted: answer.accepted, unknown: answer.unknown))
    }

    func orders(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let orders = try await service.customerOrders(customerRef: customer.ref, tenant: customer.tenant)
        return try ConditionalResponse.make(request, CustomerOrdersResponse(orders: orders.map(Self.response)))
    }

    func order(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let id = try OrderRoutes.orderID(context)
        guard let read = try await service.customerOrder(customerRef: customer.ref, tenant: customer.tenant, id: id) else {
            throw APIError.unknownOrder
        }
        return try ConditionalResponse.make(
            request,
            CustomerOrderResponse(
                order: Self.response(read.order), lastDelivered: read.push.flatMap(Self.delivered), frequentUpdates: read.frequentUpdates))
    }

    func putActivity(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let id = try OrderRoutes.orderID(context)
        let body = try WireCoding.decode(ActivityTokenRequest.self, from: try await request.bodyData(context: context))
        let token = try TokenRoutes.validated(body.token, field: "token")
        let registered = try await service.putActivityToken(
            orderID: id, in: TenantScope(tenant: customer.tenant), token: token, environment: body.environment, bundleID: body.bundleID,
            customerRef: customer.ref, frequentUpdates: body.frequentUpdates ?? true)
        context.logger.info(
            "live activity token registered by the customer",
            metadata: [
                "order_id": "\(id)", "token": "\(registered.redactedToken)", "created": "\(registered.created)",
                "frequent_updates": "\(body.frequentUpdates ?? true)",
            ])
        return try JSONResponse.make(registered.created ? .created : .ok, TokenResponse(registered, orderID: id, customerRef: nil))
    }

    func putToken(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let (kind, token) = try TokenRoutes.kindAndToken(context)
        let body = try WireCoding.decode(CustomerTokenRequest.self, from: try await request.bodyData(context: context))
        let replaces = try body.replaces.map { try TokenRoutes.validated($0, field: "replaces") }
        let registered = try await service.putCustomerToken(
            customerRef: customer.ref, tenant: customer.tenant, kind: kind, token: token, environment: body.environment,
            bundleID: body.bundleID, replaces: replaces)
        context.logger.info(
            "customer token registered by the customer",
            metadata: ["kind": "\(kind.rawValue)", "token": "\(registered.redactedToken)", "created": "\(registered.created)"])
        return try JSONResponse.make(registered.created ? .created : .ok, TokenResponse(registered, orderID: nil, customerRef: nil))
    }

    func deleteToken(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let (kind, token) = try TokenRoutes.kindAndToken(context)
        guard try await service.deleteCustomerToken(customerRef: customer.ref, tenant: customer.tenant, kind: kind, token: token) else {
            throw APIError.unknownToken
        }
        return Response(status: .noContent)
    }

    func widget(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let orders = try await service.customerOrders(customerRef: customer.ref, tenant: customer.tenant)
        // The fetch is the receipt of the widget pushes that asked for it (inferred).
        try await service.widgetFetched(customerRef: customer.ref, tenant: customer.tenant)
        return try ConditionalResponse.make(request, Self.widgetFeed(orders))
    }

    /// The order the widgets show: a `ready` one first (the oldest, it has waited longest), else the open order
    /// due soonest; its relevance window runs around the pickup ETA.
    static func widgetFeed(_ orders: [CustomerOrder]) -> WidgetFeedResponse {
        let open = orders.filter { OrderState.open.contains($0.order.state) }
        let shown = open.min { a, b in
            let rank = { (o: CustomerOrder) in o.order.state == .ready ? 0 : 1 }
            return (rank(a), a.order.state == .ready ? a.order.updatedAt : a.order.eta, a.order.number)
                < (rank(b), b.order.state == .ready ? b.order.updatedAt : b.order.eta, b.order.number)
        }
        return WidgetFeedResponse(
            order: shown.map(response),
            relevance: shown.map { RelevanceWindow(RelevanceInterval.widget($0.order)) },
            openOrders: open.count)
    }

    static func response(_ order: CustomerOrder) -> OrderResponse {
        OrderResponse(order.order, projection: .some(order.projection))
    }

    /// The outbox body as APNs accepted it, read back into what the app needs to reconcile.
    static func delivered(_ push: DeliveredActivityPush) -> DeliveredActivityState? {
        guard let body = try? JSONDecoder().decode(JSONValue.self, from: Data(push.body.utf8)), let aps = body["aps"],
            var contentState = aps["content-state"]
        else { return nil }
        // The stored body holds the receipt's placeholder (the real one was put in at sending, never stored): leave it out.
        if case .object(var members) = contentState {
            members["receipt"] = nil
            contentState = .object(members)
        }
        return DeliveredActivityState(
            event: push.event, timestamp: aps["timestamp"]?.intValue, contentState: contentState,
            staleDate: aps["stale-date"]?.intValue, dismissalDate: aps["dismissal-date"]?.intValue, deliveredAt: push.sentAt)
    }
}
