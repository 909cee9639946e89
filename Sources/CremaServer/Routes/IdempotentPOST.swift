import CremaAPNsProtocol
import CremaAPI
import CremaCore
import CremaService
import CremaStore
import HTTPTypes
import Crypto
import Foundation
import Hummingbird
import Logging

/// A POST outside the order commands (administration, webhooks) run once per Idempotency-Key: the key is claimed
/// before the request is performed, so a duplicate sent meanwhile is told to retry (409) and a later one gets the
/// first answer. Request bodies are kept as their SHA-256 only, as some carry a secret (a `.p8`). What is shown
/// once (an issued API key, a webhook's secret) is stored without it (`kept`), so a replay
/// answers everything but the secret.
enum IdempotentPOST {
    static func run(
        _ request: Request, logger: Logger, database: CremaDatabase, principal: APIPrincipal, tenant: String, body: some Encodable,
        _ perform: () async throws -> (status: HTTPResponse.Status, shown: String, kept: String)
    ) async throws -> Response {
        let key = try OrderRoutes.idempotencyKey(request)
        let identity = IdempotentRequest(
            scope: principal.role.rawValue + ":" + (principal.keyID ?? (principal.role == .admin ? "bootstrap" : "configured")), key: key, path: "POST \(request.uri.path)",
            body: "sha256:" + SHA256.hash(data: Data(try WireCoding.canonical(body).utf8)).hexEncoded)
        let claim: IdempotencyClaim
        switch try await database.idempotency.claim(identity, tenant: tenant) {
        case .answered(let replay): return OrderRoutes.respond(replay)
        case .claimed(let claimed): claim = claimed
        }
        let status: HTTPResponse.Status, shown: String, kept: String
        do {
            (status, shown, kept) = try await perform()
        } catch {
            // Refused, or failed: free the key for a retry (should that fail too, the claim lapses after its lease).
            // In a task of its own, which the request's cancellation does not reach: a client gone must not leave
            // the key held.
            await Task { try? await database.idempotency.release(claim) }.value
            throw error
        }
        // Done: the answer goes to the client even if it cannot be kept, since what it shows once (a key, a secret)
        // would otherwise be lost; a retry then waits out the lease and performs again. Kept in a task of its own too.
        let answer = CommandResponse(status: Int(status.code), body: kept, replayed: false)
        switch await Task(operation: { try await database.idempotency.complete(claim, answer: answer) }).result {
        case .success(true): break
        case .success(false):
            logger.warning("Idempotency-Key answered after its claim lapsed: a retry may have performed the request again", metadata: ["path": "\(identity.path)"])
        case .failure(let error):
            logger.error("Idempotency-Key answer not kept: a retry after the lease performs the request again", metadata: ["path": "\(identity.path)", "error": "\((error as? StoreError)?.code ?? "internal_error")"])
        }
        return JSONResponse.make(status, raw: shown)
    }
}
