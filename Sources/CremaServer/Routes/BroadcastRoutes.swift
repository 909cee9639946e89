import CremaAPI
import CremaCore
import CremaService
import Foundation
import Hummingbird
import Logging

/// A store's pickup board on an APNs broadcast channel (docs/broadcast.md): `PUT`/`GET`/`DELETE
/// /v1/stores/{store}/broadcast`, `POST /v1/stores/{store}/announcements`, and the customer's
/// `GET /v1/me/stores/{store}/broadcast`.
struct BroadcastRoutes {
    let broadcasts: BroadcastService
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.put("/v1/stores/{store}/broadcast") { request, context in try await self.enable(request, context) }
        router.get("/v1/stores/{store}/broadcast") { request, context in try await self.read(request, context) }
        router.delete("/v1/stores/{store}/broadcast") { request, context in try await self.disable(request, context) }
        router.post("/v1/stores/{store}/announcements") { request, context in try await self.announce(request, context) }
        router.get("/v1/me/stores/{store}/broadcast") { request, context in try await self.customerBoard(request, context) }
        router.put("/v1/me/stores/{store}/broadcast/start-token") { request, context in try await self.putStartToken(request, context) }
        router.delete("/v1/me/stores/{store}/broadcast/start-token") { request, context in try await self.deleteStartToken(request, context) }
    }

    func enable(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (store, caller) = try Self.store(context, roles: [.pos])
        let body = try WireCoding.decode(BroadcastPutRequest.self, from: try await request.bodyData(context: context))
        let channel = try await broadcasts.enable(store: store, body, in: caller.scope)
        context.logger.info("store broadcast enabled", metadata: ["store": "\(store)", "storage": "\(channel.storage)"])
        return try JSONResponse.make(.ok, channel)
    }

    func read(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (store, caller) = try Self.store(context, roles: [.pos, .barista, .dashboard])
        return try JSONResponse.make(.ok, try await broadcasts.read(store: store, in: caller.scope))
    }

    func disable(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (store, caller) = try Self.store(context, roles: [.pos])
        let deletedAtAPNs = try await broadcasts.disable(store: store, in: caller.scope)
        if deletedAtAPNs {
            context.logger.info("store broadcast disabled", metadata: ["store": "\(store)"])
        } else {
            context.logger.warning(
                "store broadcast disabled; APNs could not delete the channel now, the reconciliation will", metadata: ["store": "\(store)"])
        }
        return Response(status: .noContent)
    }

    func announce(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let (store, caller) = try Self.store(context, roles: [.pos, .barista])
        let principal = try context.presentedKey()
        let body = try WireCoding.decode(AnnouncementRequest.self, from: try await request.bodyData(context: context))
        return try await IdempotentPOST.run(
            request, logger: context.logger, gate: broadcasts.idempotency, principal: principal, tenant: caller.scope.tenant, body: body
        ) {
            let answer = try WireCoding.canonical(try await broadcasts.announce(store: store, body, in: caller.scope))
            return (.created, answer, answer)
        }
    }

    func customerBoard(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let store = try StoreRoutes.storeID(context)
        return try JSONResponse.make(.ok, try await broadcasts.customerBoard(store: store, tenant: customer.tenant))
    }

    func putStartToken(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let store = try StoreRoutes.storeID(context)
        let body = try WireCoding.decode(BoardStartTokenRequest.self, from: try await request.bodyData(context: context))
        try await broadcasts.registerStartToken(store: store, body, customerRef: customer.ref, tenant: customer.tenant)
        return Response(status: .noContent)
    }

    func deleteStartToken(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let store = try StoreRoutes.storeID(context)
        guard try await broadcasts.removeStartToken(store: store, customerRef: customer.ref, tenant: customer.tenant) else {
            throw APIError.unknownToken
        }
        return Response(status: .noContent)
    }

    /// The path's store, which the caller's key must reach (a key limited to other stores gets 403, as for orders).
    static func store(_ context: CremaRequestContext, roles: Set<Role>) throws(APIError) -> (String, TenantCaller) {
        let caller = try context.authorize(roles)
        let store = try StoreRoutes.storeID(context)
        guard caller.scope.includes(store: store) else { throw .storeNotPermitted(store) }
        return (store, caller)
    }
}
