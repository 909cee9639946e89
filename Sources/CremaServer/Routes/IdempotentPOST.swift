import CremaAPI
import CremaCore
import CremaService
import CremaStore
import HTTPTypes
import Hummingbird

/// A POST outside the order commands (administration, webhooks) run once per Idempotency-Key: the key is claimed
/// before the request is performed, so a duplicate sent meanwhile is told to retry (409) and a later one gets the
/// first answer. What is shown once (an issued API key, a webhook's secret) is stored without it (`kept`), so a replay
/// answers everything but the secret.
enum IdempotentPOST {
    static func run(
        _ request: Request, database: CremaDatabase, principal: APIPrincipal, tenant: String, body: some Encodable,
        _ perform: () async throws -> (status: HTTPResponse.Status, shown: String, kept: String)
    ) async throws -> Response {
        let key = try OrderRoutes.idempotencyKey(request)
        let identity = IdempotentRequest(
            scope: principal.role.rawValue + ":" + (principal.keyID ?? (principal.role == .admin ? "bootstrap" : "configured")), key: key, path: "POST \(request.uri.path)", body: try WireCoding.canonical(body))
        let claim: IdempotencyClaim
        switch try await database.idempotency.claim(identity, tenant: tenant) {
        case .answered(let replay): return OrderRoutes.respond(replay)
        case .claimed(let claimed): claim = claimed
        }
        let status: HTTPResponse.Status, shown: String, kept: String
        do {
            (status, shown, kept) = try await perform()
        } catch {
            // Nothing was done: free the key for a retry. Should this fail too, the claim lapses after its lease.
            try? await database.idempotency.release(claim)
            throw error
        }
        try await database.idempotency.complete(claim, answer: CommandResponse(status: Int(status.code), body: kept, replayed: false))
        return JSONResponse.make(status, raw: shown)
    }
}
