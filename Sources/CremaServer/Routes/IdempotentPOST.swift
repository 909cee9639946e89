import CremaAPI
import CremaCore
import CremaService
import CremaStore
import HTTPTypes
import Hummingbird

/// A POST outside the order commands (administration, webhooks) run once per Idempotency-Key: a retry gets the first
/// answer. What is shown once (an issued API key, a webhook's secret) is stored without it (`kept`), so a replay
/// answers everything but the secret.
enum IdempotentPOST {
    static func run(
        _ request: Request, database: CremaDatabase, principal: APIPrincipal, tenant: String, body: some Encodable,
        _ perform: () async throws -> (status: HTTPResponse.Status, shown: String, kept: String)
    ) async throws -> Response {
        let key = try OrderRoutes.idempotencyKey(request)
        let identity = IdempotentRequest(
            scope: principal.role.rawValue + ":" + (principal.keyID ?? (principal.role == .admin ? "bootstrap" : "configured")), key: key, path: "POST \(request.uri.path)", body: try WireCoding.canonical(body))
        if let replay = try await database.idempotency.stored(identity, tenant: tenant) { return OrderRoutes.respond(replay) }
        let (status, shown, kept) = try await perform()
        try await database.idempotency.remember(identity, tenant: tenant, answer: CommandResponse(status: Int(status.code), body: kept, replayed: false))
        return JSONResponse.make(status, raw: shown)
    }
}
