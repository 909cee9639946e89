import CremaAPNsProtocol
import Crypto
import Foundation
import Synchronization

/// Checks `authorization: bearer <JWT>` the way APNs does (docs/apns.md §2): ES256 only, a known `kid`, the
/// `iss` that is that key's team, a valid signature, and an `iat` no older than an hour.
final class ProviderTokenVerifier: Sendable {
    /// What a verified token says; the signature check is cached per JWT, the age check is not.
    struct Claims: Sendable, Equatable {
        var keyID: String
        /// The `iss` claim, when it is a string.
        var teamID: String?
        var issuedAt: Date
        var fingerprint: String
    }

    enum Failure: Error, Equatable {
        case missing
        case invalid(String, Claims?)
        case expired(Claims)
    }

    private struct AcceptedKey {
        var teamID: String
        var publicKey: P256.Signing.PublicKey
    }

    /// Key ID → the keys uploaded under it (normally one; a re-uploaded key may sit beside the old one).
    private let keys: Mutex<[String: [AcceptedKey]]>
    private let verified = Mutex<[String: Claims]>([:])

    init(keys: [APNsSimulatorKey]) throws(APNsSimulatorError) {
        var parsed: [String: [AcceptedKey]] = [:]
        for key in keys {
            guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM) else {
                throw .invalidPublicKey(keyID: key.keyID)
            }
            parsed[key.keyID, default: []].append(AcceptedKey(teamID: key.teamID, publicKey: publicKey))
        }
        self.keys = Mutex(parsed)
    }

    /// Accepts one more key from now on (a key uploaded to the developer account while the server runs).
    func trust(_ key: APNsSimulatorKey) throws(APNsSimulatorError) {
        guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM) else {
            throw .invalidPublicKey(keyID: key.keyID)
        }
        keys.withLock { keys in
            let accepted = AcceptedKey(teamID: key.teamID, publicKey: publicKey)
            if !(keys[key.keyID] ?? []).contains(where: { $0.teamID == key.teamID && $0.publicKey.rawRepresentation == publicKey.rawRepresentation }) {
                keys[key.keyID, default: []].append(accepted)
            }
        }
    }

    /// The token's claims, or why APNs would refuse it.
    func verify(authorization: String?, now: Date) -> Result<Claims, Failure> {
        guard let authorization, !authorization.isEmpty else { return .failure(.missing) }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return .failure(.invalid("authorization is not \"bearer <JWT>\"", nil))
        }
        let jwt = String(parts[1]).trimmingCharacters(in: .whitespaces)
        let claims: Claims
        if let cached = verified.withLock({ $0[jwt] }) {
            claims = cached
        } else {
            switch check(jwt) {
            case .failure(let failure): return .failure(failure)
            case .success(let checked):
                claims = checked
                verified.withLock { cache in
                    if cache.count >= 256 { cache.removeAll(keepingCapacity: true) }
                    cache[jwt] = checked
                }
            }
        }
        if now.timeIntervalSince(claims.issuedAt) > 3600 { return .failure(.expired(claims)) }
        // APNs does not publish a rule for tokens dated in the future; more than 5 minutes ahead is treated as a
        // forged or misdated token.
        if claims.issuedAt.timeIntervalSince(now) > 300 {
            return .failure(.invalid("iat is in the future", claims))
        }
        return .success(claims)
    }

    private func check(_ jwt: String) -> Result<Claims, Failure> {
        let segments = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerData = Base64URL.decode(segments[0]),
            let claimsData = Base64URL.decode(segments[1]),
            let signatureData = Base64URL.decode(segments[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let body = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return .failure(.invalid("not a JWT (three base64url JSON segments)", nil)) }

        guard header["alg"] as? String == "ES256" else { return .failure(.invalid("alg must be ES256", nil)) }
        guard let keyID = header["kid"] as? String else { return .failure(.invalid("kid is missing", nil)) }
        guard let iat = (body["iat"] as? NSNumber)?.doubleValue, !(body["iat"] is String) else {
            return .failure(.invalid("iat is missing or not a number", nil))
        }
        let teamID = body["iss"] as? String
        let claims = Claims(
            keyID: keyID,
            teamID: teamID,
            issuedAt: Date(timeIntervalSince1970: iat),
            fingerprint: SHA256.hash(data: Data(jwt.utf8)).prefix(8).hexEncoded)
        guard let uploaded = keys.withLock({ $0[keyID] }) else { return .failure(.invalid("unknown kid", claims)) }
        let candidates = uploaded.filter { $0.teamID == teamID }
        guard !candidates.isEmpty else {
            return .failure(.invalid("iss is not the team of key \(keyID)", claims))
        }
        let signed = Data((segments[0] + "." + segments[1]).utf8)
        guard signatureData.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            candidates.contains(where: { $0.publicKey.isValidSignature(signature, for: signed) })
        else { return .failure(.invalid("bad signature", claims)) }
        return .success(claims)
    }
}
