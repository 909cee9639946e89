import CremaAPI
import CremaCore
import CremaService
import Hummingbird

/// `GET /v1/me/relevance` (docs/design.md §9.2): when and where each of the customer's open orders matters, for the
/// watch's relevance widget. Scoped by the customer token's tenant and `sub` in SQL, like every `/v1/me` read.
struct RelevanceRoutes {
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.get("/v1/me/relevance") { request, context in try await self.relevance(request, context) }
    }

    func relevance(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let orders = try await service.relevantOrders(customerRef: customer.ref, tenant: customer.tenant)
        return try ConditionalResponse.make(request, Self.response(orders))
    }

    /// One entry per open order, in the order read (newest first); an order that finished between the read and now
    /// cannot be in it, since only open orders are read.
    static func response(_ orders: [RelevantOrder]) -> RelevanceResponse {
        RelevanceResponse(entries: orders.compactMap { relevant in
            RelevanceInterval.of(relevant.order).map {
                RelevanceEntry(orderID: relevant.order.id, storeID: relevant.order.storeID, interval: $0, location: relevant.location)
            }
        })
    }
}
