import CremaAPI
import CremaService
import HTTPTypes
import Hummingbird
import Logging

/// The HTTP side of a POST outside the order commands (administration, webhooks): takes the Idempotency-Key from
/// the request, runs the work through the service's `IdempotencyGate` (which performs it once per key and has a
/// concurrent duplicate wait for the first answer, as an order command's does) and answers what the gate says, a
/// replay with `Idempotent-Replayed: true` as `OrderRoutes.respond` does for orders.
enum IdempotentPOST {
    static func run(
        _ request: Request, logger: Logger, gate: IdempotencyGate, principal: APIPrincipal, tenant: String, body: some Encodable,
        _ perform: () async throws -> (status: HTTPResponse.Status, shown: String, kept: String)
    ) async throws -> Response {
        let identity = try IdempotentRequest.administrative(
            principal: principal, key: try OrderRoutes.idempotencyKey(request), path: "POST \(request.uri.path)", body: body)
        let outcome = try await gate.run(identity, tenant: tenant) {
            let (status, shown, kept) = try await perform()
            return IdempotencyGate.Performed(status: Int(status.code), shown: shown, kept: kept)
        }
        switch outcome.keeping {
        case .kept: break
        case .claimLapsed:
            logger.warning(
                "Idempotency-Key answered after its claim lapsed: a retry may have performed the request again",
                metadata: ["path": "\(identity.path)"])
        case .notKept(let code):
            logger.error(
                "Idempotency-Key answer not kept: a retry after the lease performs the request again",
                metadata: ["path": "\(identity.path)", "error": "\(code)"])
        }
        return OrderRoutes.respond(outcome.response)
    }
}
