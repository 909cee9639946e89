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
        let scope = try BroadcastService.managerScope(of: try context.presentedKey())
        let store = try Self.store(context, in: scope)
        let body = try WireCoding.decode(BroadcastPutRequest.self, from: try await request.bodyData(context: context))
        let broadcast = try await broadcasts.enable(store: store, body.settings, in: scope)
        context.logger.info("store broadcast enabled", metadata: ["store": "\(store)", "storage": "\(broadcast.channel.storage)"])
        return try JSONResponse.make(.ok, BroadcastResponse(broadcast))
    }

    func read(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try BroadcastService.readerScope(of: try context.presentedKey())
        let store = try Self.store(context, in: scope)
        return try JSONResponse.make(.ok, BroadcastResponse(try await broadcasts.read(store: store, in: scope)))
    }

    func disable(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try BroadcastService.managerScope(of: try context.presentedKey())
        let store = try Self.store(context, in: scope)
        let deletedAtAPNs = try await broadcasts.disable(store: store, in: scope)
        if deletedAtAPNs {
            context.logger.info("store broadcast disabled", metadata: ["store": "\(store)"])
        } else {
            context.logger.warning(
                "store broadcast disabled; APNs could not delete the channel now, the reconciliation will", metadata: ["store": "\(store)"])
        }
        return Response(status: .noContent)
    }

    func announce(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let principal = try context.presentedKey()
        let scope = try BroadcastService.announcerScope(of: principal)
        let store = try Self.store(context, in: scope)
        let body = try WireCoding.decode(AnnouncementRequest.self, from: try await request.bodyData(context: context))
        return try await IdempotentPOST.run(
            request, logger: context.logger, gate: broadcasts.idempotency, principal: principal, tenant: scope.tenant, body: body
        ) {
            let kept = try await broadcasts.announce(store: store, AnnouncementDraft(message: body.message, until: body.until), in: scope)
            let answer = try WireCoding.canonical(AnnouncementResponse(store: store, kept))
            return (.created, answer, answer)
        }
    }

    func customerBoard(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let store = try StoreRoutes.storeID(context)
        return try JSONResponse.make(.ok, CustomerBroadcastResponse(try await broadcasts.customerBoard(store: store, tenant: customer.tenant)))
    }

    func putStartToken(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let customer = try context.authorizeCustomer()
        let store = try StoreRoutes.storeID(context)
        let body = try WireCoding.decode(BoardStartTokenRequest.self, from: try await request.bodyData(context: context))
        try await broadcasts.registerStartToken(
            store: store, token: body.token, environment: body.environment, customerRef: customer.ref, tenant: customer.tenant)
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

    /// The path's store, which the caller's scope (by the service's rule for what it does) must reach: a key limited to
    /// other stores gets 403, as for orders.
    static func store(_ context: CremaRequestContext, in scope: TenantScope) throws(APIError) -> String {
        let store = try StoreRoutes.storeID(context)
        guard scope.includes(store: store) else { throw .storeNotPermitted(store) }
        return store
    }
}

// The broadcast bodies as the service's commands, and what it answers with in the API's words.

extension BroadcastPutRequest {
    var settings: BroadcastSettings { BroadcastSettings(storage: storage, bundleID: bundleID, environment: environment) }
}

extension BroadcastResponse {
    init(_ broadcast: StoreBroadcast) {
        let channel = broadcast.channel
        self.init(
            storeID: channel.storeID, channelID: channel.channelID, bundleID: channel.bundleID, environment: channel.environment,
            storage: channel.storage, state: channel.recreations > 0 ? "recreated" : "active", createdAt: WireCoding.rfc3339(channel.createdAt),
            recreations: channel.recreations, lastBroadcastAt: channel.lastBroadcastAt.map(WireCoding.rfc3339), lastStatus: channel.lastStatus,
            lastReason: channel.lastReason, broadcasts: channel.broadcasts, contentState: broadcast.board.contentState)
    }
}

extension CustomerBroadcastResponse {
    init(_ broadcast: StoreBroadcast) {
        self.init(
            channelID: broadcast.channel.channelID, environment: broadcast.channel.environment, attributes: broadcast.board.attributes,
            contentState: broadcast.board.contentState)
    }
}

extension AnnouncementResponse {
    init(store: String, _ kept: StoreAnnouncement) {
        self.init(storeID: store, message: kept.message, until: WireCoding.rfc3339(kept.until), createdAt: WireCoding.rfc3339(kept.createdAt))
    }
}
