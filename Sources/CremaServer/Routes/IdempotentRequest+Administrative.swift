import CremaAPI
import CremaAPNsProtocol
import CremaCore
import CremaService
import Crypto
import Foundation

extension IdempotentRequest {
    /// The identity of a POST outside the order commands (`IdempotencyGate`): scoped to the key that sent it (a
    /// generated key's id; the bootstrap or a configured key by role), its body kept as the SHA-256 of its canonical
    /// JSON only, as some bodies carry a secret (a `.p8`) that would otherwise be stored for the key's 24 hours. Here,
    /// beside the routes, because the body it digests is the wire request.
    static func administrative(
        principal: APIPrincipal, key: String, path: String, body: some Encodable
    ) throws -> IdempotentRequest {
        let sender = principal.keyID ?? (principal.role == .admin ? "bootstrap" : "configured")
        let digest = SHA256.hash(data: Data(try WireCoding.canonical(body).utf8)).hexEncoded
        return IdempotentRequest(scope: principal.role.rawValue + ":" + sender, key: key, path: path, body: "sha256:" + digest)
    }
}
