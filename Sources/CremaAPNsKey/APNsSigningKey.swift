import CremaAPNsProtocol
package import Crypto
import Foundation

/// The provider's `.p8` key (a P-256 key in PKCS#8 PEM) with its Key ID and Team ID: everything needed to sign
/// the ES256 JWTs APNs requires (docs/apns.md §2).
public struct APNsSigningKey: Sendable {
    /// The P-256 private key that signs provider tokens (`CremaAPNs`' provider token cache).
    package let privateKey: P256.Signing.PrivateKey
    /// The 10-character Key ID from the developer account (the JWT header's `kid`).
    public let keyID: String
    /// The 10-character Team ID (the JWT claims' `iss`).
    public let teamID: String
    /// The first 16 hex characters of the SHA-256 of the public key (x9.63): tells apart two uploads with the
    /// same Key ID in logs, listings and token caches without revealing anything secret.
    public let fingerprint: String

    /// Reads a key from PEM text (PKCS#8 `PRIVATE KEY`, as Apple ships `.p8` files, or SEC1 `EC PRIVATE KEY`).
    public init(pem: String, keyID: String, teamID: String) throws(APNsSigningKeyError) {
        let privateKey: P256.Signing.PrivateKey
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .invalidKey(reason: "\(error)")
        }
        try self.init(privateKey: privateKey, keyID: keyID, teamID: teamID)
    }

    /// Reads a `.p8` key file.
    public init(contentsOf path: String, keyID: String, teamID: String) throws(APNsSigningKeyError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .unreadableFile(path: path, reason: error.localizedDescription)
        }
        try self.init(pem: text, keyID: keyID, teamID: teamID)
    }

    private init(privateKey: P256.Signing.PrivateKey, keyID: String, teamID: String) throws(APNsSigningKeyError) {
        try Self.check(keyID, name: "Key ID")
        try Self.check(teamID, name: "Team ID")
        self.privateKey = privateKey
        self.keyID = keyID
        self.teamID = teamID
        self.fingerprint = Self.fingerprint(of: privateKey.publicKey)
    }

    private init(unchecked privateKey: P256.Signing.PrivateKey, keyID: String, teamID: String) {
        self.privateKey = privateKey
        self.keyID = keyID
        self.teamID = teamID
        self.fingerprint = Self.fingerprint(of: privateKey.publicKey)
    }

    /// A fresh random key, for the embedded simulator and tests (never for Apple, which issues its own keys).
    public static func generate(keyID: String, teamID: String) -> APNsSigningKey {
        APNsSigningKey(unchecked: P256.Signing.PrivateKey(), keyID: keyID, teamID: teamID)
    }

    /// The private key as PKCS#8 PEM, the `.p8` file format.
    public var pkcs8PEM: String { privateKey.pemRepresentation }

    /// The public key as SubjectPublicKeyInfo PEM: what a server needs to verify this key's tokens.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    private static func fingerprint(of publicKey: P256.Signing.PublicKey) -> String {
        SHA256.hash(data: publicKey.x963Representation).prefix(8).hexEncoded
    }

    private static func check(_ value: String, name: String) throws(APNsSigningKeyError) {
        guard !value.isEmpty,
            value.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else {
            throw .invalidIdentifier(name: name, value: value)
        }
    }
}
