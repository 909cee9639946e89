import Foundation
import JWTKit

/// The claims Crema reads from a customer token. jwt-kit checks the signature; `CustomerTokenVerifier`
/// checks these against its injected clock, so `verify(using:)` deliberately does nothing.
struct CustomerClaims: JWTPayload {
    var sub: SubjectClaim?
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var tenant: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
