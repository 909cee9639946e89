import CremaService
import CremaAPI
import CremaCore
import CremaStore
import Foundation
import Hummingbird

/// `PUT /v1/stores/{store}` and `GET /v1/stores/{store}/board`.
struct StoreRoutes {
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.put("/v1/stores/{store}") { request, context in try await self.put(request, context) }
        router.get("/v1/stores/{store}/board") { request, context in try await self.board(request, context) }
    }

    func put(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let caller = try context.authorize([.pos])
        let id = try Self.storeID(context)
        // A key limited to some stores may not create or rename others (it may not see them either: 403 for all).
        guard caller.scope.includes(store: id) else { throw APIError.storeNotPermitted(id) }
        let body = try WireCoding.decode(StorePutRequest.self, from: try await request.bodyData(context: context))
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        // Counted in code points, as the table's CHECK (length(name) <= 120) and the document's maxLength count,
        // before trimming, so that what the document calls too long is refused.
        guard !name.isEmpty, body.name.unicodeScalars.count <= 120,
            !body.name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError.order(.invalidValue(field: "name", reason: "must be 1–120 characters without control characters"))
        }
        let timezone = body.timezone ?? "UTC"
        guard timezone.utf8.count <= 64, !timezone.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw APIError.order(.invalidValue(field: "timezone", reason: "is not an IANA time zone"))
        }
        let (saved, created) = try await service.database.stores.put(id: id, name: name, timezone: timezone, tenant: caller.scope.tenant)
        return try JSONResponse.make(created ? .created : .ok, StoreResponse(saved))
    }

    func board(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let caller = try context.authorize([.pos, .barista, .dashboard])
        let board = try await service.database.orders.board(store: try Self.storeID(context), in: caller.scope)
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
