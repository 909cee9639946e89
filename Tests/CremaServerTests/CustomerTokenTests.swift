import CremaAPI
import CremaServer
import CremaSettings
import Foundation
import JWTKit
import Testing

/// Customer tokens one refusal at a time, against a fixed clock (no test waits for a token to expire).
@Suite struct CustomerTokenTests {
    typealias F = CustomerTokenFixtures

    func verify(_ token: String, keys: [CustomerTokenSettings.Key]? = nil) async throws -> Result<CustomerIdentity, CustomerTokenRefusal> {
        let verifier = try await F.verifier(keys ?? [.hs256(secret: Array(F.secret.utf8))])
        return await verifier.verify(token)
    }

    func refusal(_ result: Result<CustomerIdentity, CustomerTokenRefusal>) -> CustomerTokenRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }

    @Test("a token signed with the shared secret names its subject as the customer") func aTokenSignedWithTheSharedSecretNamesItsSubjectAsTheCustomer() async throws {
        let identity = try await verify(try await F.hs256()).get()
        #expect(identity.ref == "c-9")
        #expect(identity.tenant == "default")
        #expect(identity.expiresAt == F.now.addingTimeInterval(600))
    }

    @Test("an ES 256 token verifies with the public key alone") func anES256TokenVerifiesWithThePublicKeyAlone() async throws {
        let key = ES256PrivateKey()
        let keys: [CustomerTokenSettings.Key] = [.es256(pem: key.publicKey.pemRepresentation)]
        #expect(try await verify(try await F.es256(key: key), keys: keys).get().ref == "c-9")
    }

    @Test("during a rotation tokens of either key are accepted") func duringARotationTokensOfEitherKeyAreAccepted() async throws {
        let old = "old-customer-secret-0123456789abcdef"
        let new = "new-customer-secret-0123456789abcdef"
        let keys: [CustomerTokenSettings.Key] = [.hs256(secret: Array(old.utf8)), .hs256(secret: Array(new.utf8))]
        #expect(try await verify(try await F.hs256(secret: old), keys: keys).get().ref == "c-9")
        #expect(try await verify(try await F.hs256(secret: new), keys: keys).get().ref == "c-9")
        #expect(refusal(try await verify(try await F.hs256(secret: old), keys: [.hs256(secret: Array(new.utf8))])) == .badSignature)
    }

    @Test("a token signed with another secret is refused as forged") func aTokenSignedWithAnotherSecretIsRefusedAsForged() async throws {
        let forged = try await F.hs256(secret: "an-attackers-secret-0123456789abcdef")
        #expect(refusal(try await verify(forged)) == .badSignature)
    }

    @Test("a token whose payload was edited after signing is refused") func aTokenWhosePayloadWasEditedAfterSigningIsRefused() async throws {
        let parts = try await F.hs256().split(separator: ".").map(String.init)
        let other = F.base64URL(Data(#"{"sub":"c-other","iss":"\#(F.issuer)","aud":"\#(F.audience)","exp":1795000600}"#.utf8))
        #expect(refusal(try await verify("\(parts[0]).\(other).\(parts[2])")) == .badSignature)
    }

    @Test("an expired token is refused once the skew allowance has passed") func anExpiredTokenIsRefusedOnceTheSkewAllowanceHasPassed() async throws {
        let expiredLongAgo = try await F.hs256(F.Claims(exp: F.now.addingTimeInterval(-61)))
        #expect(refusal(try await verify(expiredLongAgo)) == .expired)
        let withinSkew = try await F.hs256(F.Claims(exp: F.now.addingTimeInterval(-59)))
        #expect(try await verify(withinSkew).get().ref == "c-9")
    }

    @Test("a token not yet valid is refused beyond the skew allowance") func aTokenNotYetValidIsRefusedBeyondTheSkewAllowance() async throws {
        #expect(refusal(try await verify(try await F.hs256(F.Claims(nbf: F.now.addingTimeInterval(120))))) == .notYetValid)
        #expect(try await verify(try await F.hs256(F.Claims(nbf: F.now.addingTimeInterval(30)))).get().ref == "c-9")
    }

    @Test("a token from another issuer is refused") func aTokenFromAnotherIssuerIsRefused() async throws {
        #expect(refusal(try await verify(try await F.hs256(F.Claims(iss: "https://evil.example")))) == .wrongIssuer)
    }

    @Test("a token for another audience is refused") func aTokenForAnotherAudienceIsRefused() async throws {
        #expect(refusal(try await verify(try await F.hs256(F.Claims(aud: "another-service")))) == .wrongAudience)
    }

    @Test("an unsigned token with alg none is refused") func anUnsignedTokenWithAlgNoneIsRefused() async throws {
        #expect(refusal(try await verify(try F.unsigned())) == .algorithmRefused)
        #expect(refusal(try await verify(try F.unsigned(alg: "None"))) == .algorithmRefused)
    }

    @Test("an HS 256 token keyed with the servers ES 256 public key is refused") func anHS256TokenKeyedWithTheServersES256PublicKeyIsRefused() async throws {
        let key = ES256PrivateKey()
        let pem = key.publicKey.pemRepresentation
        let confused = try F.confused(publicKeyPEM: pem)
        #expect(refusal(try await verify(confused, keys: [.es256(pem: pem)])) == .algorithmRefused)
        // And the other way round: an ES256 token where only an HS256 secret is configured.
        #expect(refusal(try await verify(try await F.es256(key: key))) == .algorithmRefused)
    }

    @Test("a token without subject expiry issuer or audience is refused") func aTokenWithoutSubjectExpiryIssuerOrAudienceIsRefused() async throws {
        #expect(refusal(try await verify(try await F.hs256(F.Claims(sub: nil)))) == .missingClaim)
        #expect(refusal(try await verify(try await F.hs256(F.Claims(sub: "  ")))) == .missingClaim)
        #expect(refusal(try await verify(try await F.hs256(F.Claims(exp: nil)))) == .missingClaim)
        #expect(refusal(try await verify(try await F.hs256(F.Claims(iss: nil)))) == .missingClaim)
        #expect(refusal(try await verify(try await F.hs256(F.Claims(aud: nil)))) == .missingClaim)
    }

    @Test("a token of another tenant is refused until tenants exist") func aTokenOfAnotherTenantIsRefusedUntilTenantsExist() async throws {
        #expect(refusal(try await verify(try await F.hs256(F.Claims(tenant: "acme")))) == .unknownTenant)
        #expect(try await verify(try await F.hs256(F.Claims(tenant: "default"))).get().tenant == "default")
    }

    @Test("garbage shaped like AJWTIs malformed") func garbageShapedLikeAJWTIsMalformed() async throws {
        #expect(refusal(try await verify("eyJhbGciOiJIUzI1NiJ9.not-base64!.x")) == .malformed)
        #expect(refusal(try await verify("eyJub3QganNvbg.e30.")) == .malformed)
    }

    @Test("only credentials shaped like AJWT go to the verifier") func onlyCredentialsShapedLikeAJWTGoToTheVerifier() {
        #expect(CustomerTokenVerifier.looksLikeJWT("eyJhbGciOiJub25lIn0.e30."))
        #expect(!CustomerTokenVerifier.looksLikeJWT("app-test-key-0000000001"))
        #expect(!CustomerTokenVerifier.looksLikeJWT("eyJ.only-two"))
    }

    @Test("the configuration reads keys issuer and audience and refuses short secrets") func theConfigurationReadsKeysIssuerAndAudienceAndRefusesShortSecrets() throws {
        let pemFile = FileManager.default.temporaryDirectory.appendingPathComponent("crema-es256-\(UUID().uuidString).pem")
        try ES256PrivateKey().publicKey.pemRepresentation.write(to: pemFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: pemFile) }
        let environment = [
            "CREMA_CUSTOMER_JWT_KEYS": "hs256:\(F.secret),es256:\(pemFile.path)",
            "CREMA_CUSTOMER_JWT_ISSUER": F.issuer, "CREMA_CUSTOMER_JWT_AUDIENCE": F.audience,
        ]
        let settings = try #require(try CustomerTokenSettings(environment: environment))
        #expect(settings.keys.count == 2)
        #expect(!settings.description.contains(F.secret))
        #expect(try CustomerTokenSettings(environment: [:]) == nil)
        #expect(throws: ConfigurationError.self) { try CustomerTokenSettings(environment: ["CREMA_CUSTOMER_JWT_KEYS": "hs256:short"]) }
        #expect(throws: ConfigurationError.self) { try CustomerTokenSettings(environment: ["CREMA_CUSTOMER_JWT_KEYS": "hs256:\(F.secret)"]) }
        #expect(throws: ConfigurationError.self) { try CustomerTokenSettings(environment: ["CREMA_CUSTOMER_JWT_KEYS": "rs256:x"]) }
    }
}
