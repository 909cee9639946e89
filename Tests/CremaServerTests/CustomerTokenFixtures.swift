import CremaClock
import CremaServer
import CremaSettings
import CremaTestSupport
import Crypto
import Foundation
import JWTKit

/// Customer tokens as a brand's backend would mint them, with jwt-kit, against a fixed clock: the verifier
/// under test reads the same `now`, so expiry is decided without sleeping.
enum CustomerTokenFixtures {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let secret = "test-customer-secret-0123456789abcdef"
    static let issuer = "https://brand.example/auth"
    static let audience = "crema"
    /// The brand's ES256 signing key; the harnesses configure its public half next to the HS256 secret.
    static let signingKey = ES256PrivateKey()
    static var harnessKeys: [CustomerTokenSettings.Key] {
        [.hs256(secret: Array(secret.utf8)), .es256(pem: signingKey.publicKey.pemRepresentation)]
    }

    /// The claims a test chooses; nil leaves a claim out.
    struct Claims: JWTPayload {
        var sub: SubjectClaim?
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        var exp: ExpirationClaim?
        var nbf: NotBeforeClaim?
        var tenant: String?

        init(
            sub: String? = "c-9", iss: String? = CustomerTokenFixtures.issuer, aud: String? = CustomerTokenFixtures.audience,
            exp: Date? = CustomerTokenFixtures.now.addingTimeInterval(600), nbf: Date? = nil, tenant: String? = nil
        ) {
            self.sub = sub.map(SubjectClaim.init(value:))
            self.iss = iss.map(IssuerClaim.init(value:))
            self.aud = aud.map { AudienceClaim(value: [$0]) }
            self.exp = exp.map(ExpirationClaim.init(value:))
            self.nbf = nbf.map(NotBeforeClaim.init(value:))
            self.tenant = tenant
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func settings(_ keys: [CustomerTokenSettings.Key] = [.hs256(secret: Array(secret.utf8))]) -> CustomerTokenSettings {
        CustomerTokenSettings(keys: keys, issuer: issuer, audience: audience)
    }

    static func verifier(_ keys: [CustomerTokenSettings.Key] = [.hs256(secret: Array(secret.utf8))]) async throws -> CustomerTokenVerifier {
        try await CustomerTokenVerifier(settings(keys), clock: .reading { now })
    }

    /// An HS256 token signed with `secret`.
    static func hs256(_ claims: Claims = Claims(), secret: String = CustomerTokenFixtures.secret) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// An ES256 token signed with `key`.
    static func es256(_ claims: Claims = Claims(), key: ES256PrivateKey) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key)
        return try await keys.sign(claims)
    }

    /// A token for `customer` that the harness's verifier accepts.
    static func token(for customer: String) async throws -> String {
        try await hs256(Claims(sub: customer))
    }

    /// `{"alg":"none"}` with the given claims and an empty signature: what a forger sends first.
    static func unsigned(_ claims: Claims = Claims(), alg: String = "none") throws -> String {
        let header = base64URL(Data(#"{"alg":"\#(alg)","typ":"JWT"}"#.utf8))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return "\(header).\(base64URL(try encoder.encode(claims)))."
    }

    /// HS/ES confusion: an HS256 token whose HMAC key is the server's ES256 public key in PEM, which a
    /// verifier that trusts the header's `alg` would accept.
    static func confused(_ claims: Claims = Claims(), publicKeyPEM: String) throws -> String {
        let header = base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let input = "\(header).\(base64URL(try encoder.encode(claims)))"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(publicKeyPEM.utf8)))
        return "\(input).\(base64URL(Data(mac)))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
