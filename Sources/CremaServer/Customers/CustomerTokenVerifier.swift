public import CremaAPI
public import CremaClock
public import CremaCore
public import CremaSettings
public import Foundation
import JWTKit

/// Verifies customer tokens with jwt-kit: the algorithm must be one a configured key uses (so an HS256 token
/// is never checked with an ES256 public key as its secret, and `none` never verifies), the signature must
/// verify with one of those keys, and `iss`, `aud`, `exp` and `nbf` must hold at the injected clock's time,
/// give or take `leeway`.
public struct CustomerTokenVerifier: Sendable {
    /// One configured key in its own collection, so each token is tried against exactly the keys of its `alg`.
    struct Entry: Sendable {
        var algorithm: String
        var collection: JWTKeyCollection
    }

    let entries: [Entry]
    public let issuer: String
    public let audience: String
    /// The one tenant whose tokens this verifier accepts (its keys are that tenant's).
    public let tenant: String
    /// The clock skew tolerated between the brand's backend and Crema.
    public let leeway: TimeInterval
    let clock: CremaClock

    public static let defaultLeeway: TimeInterval = 60

    public init(
        _ settings: CustomerTokenSettings, tenant: String = TenantScope.defaultTenantName, leeway: TimeInterval = Self.defaultLeeway,
        clock: CremaClock
    ) async throws {
        self.tenant = tenant
        var entries: [Entry] = []
        for key in settings.keys {
            let collection = JWTKeyCollection()
            switch key {
            case .hs256(let secret):
                await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
                entries.append(Entry(algorithm: "HS256", collection: collection))
            case .es256(let pem):
                await collection.add(ecdsa: try ES256PublicKey(pem: pem))
                entries.append(Entry(algorithm: "ES256", collection: collection))
            }
        }
        self.entries = entries
        issuer = settings.issuer
        audience = settings.audience
        self.leeway = leeway
        self.clock = clock
    }

    /// Whether a bearer credential is shaped like a JWT (three base64url parts, a JSON header), so it goes to
    /// this verifier instead of the API key table.
    public static func looksLikeJWT(_ credential: Substring) -> Bool {
        credential.hasPrefix("eyJ") && credential.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// The tenant a token names, read before its signature is checked (to pick whose keys check it): the `tenant`
    /// claim, or `default` without one. Nil for a token that is not a JWT.
    public static func claimedTenant(_ token: String) -> String? {
        guard let parsed = try? DefaultJWTParser().parse(Array(token.utf8), as: CustomerClaims.self) else { return nil }
        return parsed.payload.tenant ?? TenantScope.defaultTenantName
    }

    /// The customer the token speaks for, or why it is refused.
    public func verify(_ token: String) async -> Result<CustomerIdentity, CustomerTokenRefusal> {
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse(Array(token.utf8), as: CustomerClaims.self).header
        } catch {
            return .failure(.malformed)
        }
        let candidates = entries.filter { $0.algorithm == header.alg }
        guard !candidates.isEmpty else { return .failure(.algorithmRefused) }
        var verified: CustomerClaims?
        for candidate in candidates {
            if let claims = try? await candidate.collection.verify(token, as: CustomerClaims.self) {
                verified = claims
                break
            }
        }
        guard let claims = verified else { return .failure(.badSignature) }
        return check(claims)
    }

    /// The claim checks, at the injected clock's time.
    func check(_ claims: CustomerClaims) -> Result<CustomerIdentity, CustomerTokenRefusal> {
        let now = clock.now
        guard let exp = claims.exp, let iss = claims.iss, let aud = claims.aud, let sub = claims.sub?.value,
            (try? OrderValidation.customerRef(sub)) != nil
        else { return .failure(.missingClaim) }
        guard now.timeIntervalSince(exp.value) <= leeway else { return .failure(.expired) }
        if let nbf = claims.nbf, nbf.value.timeIntervalSince(now) > leeway { return .failure(.notYetValid) }
        guard iss.value == issuer else { return .failure(.wrongIssuer) }
        guard aud.value.contains(audience) else { return .failure(.wrongAudience) }
        guard (claims.tenant ?? TenantScope.defaultTenantName) == tenant else { return .failure(.unknownTenant) }
        return .success(CustomerIdentity(ref: sub, tenant: tenant, expiresAt: exp.value))
    }
}
