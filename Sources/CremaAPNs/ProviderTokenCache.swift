import CremaAPNsKey
import CremaAPNsProtocol
import CremaClock
import Crypto
import Foundation
import Synchronization

/// The one ES256 provider token (JWT) per signing key, reused until it is `lifetime` old: APNs rejects a token
/// older than an hour and refuses a new one more often than every 20 minutes (docs/apns.md §2).
final class ProviderTokenCache: Sendable {
    struct Token: Sendable, Equatable {
        var jwt: String
        var issuedAt: Date
    }

    private let key: APNsSigningKey
    private let lifetime: TimeInterval
    private let now: @Sendable () -> Date
    private let current = Mutex<Token?>(nil)

    init(key: APNsSigningKey, lifetime: Duration, now: @escaping @Sendable () -> Date) {
        self.key = key
        self.lifetime = lifetime.timeInterval
        self.now = now
    }

    /// The cached token, or a new one when there is none or it has reached its lifetime.
    func token() -> Token {
        current.withLock { cached in
            if let token = cached, now().timeIntervalSince(token.issuedAt) < lifetime {
                return token
            }
            let token = mint()
            cached = token
            return token
        }
    }

    /// A token to use instead of `rejected` (APNs said it expired). Concurrent sends that saw the same
    /// rejection share one new token instead of each minting their own.
    func replace(_ rejected: Token) -> Token {
        current.withLock { cached in
            if let token = cached, token != rejected {
                return token
            }
            let token = mint()
            cached = token
            return token
        }
    }

    private func mint() -> Token {
        let issuedAt = now()
        let iat = Int(issuedAt.timeIntervalSince1970.rounded(.down))
        let header = #"{"alg":"ES256","kid":"\#(key.keyID)"}"#
        let claims = #"{"iss":"\#(key.teamID)","iat":\#(iat)}"#
        let signingInput = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        // ES256 signs SHA-256 of the input; JWS wants the raw 64-byte r‖s form, not DER.
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.privateKey.signature(for: Data(signingInput.utf8))
        } catch {
            // Signing with an in-memory P-256 key only fails if the system RNG fails.
            fatalError("ES256 signing failed: \(error)")
        }
        return Token(
            jwt: signingInput + "." + Base64URL.encode(signature.rawRepresentation),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(iat)))
    }
}
