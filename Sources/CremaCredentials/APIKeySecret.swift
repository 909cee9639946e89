import CremaAPNsProtocol
import Crypto
import Foundation

/// The keys Crema generates: `crema_<16 hex id>_<43 base64url characters>`. The id is public and finds the key's
/// row; the rest is 256 random bits. Only a SHA-256 of the whole key is stored: a fast hash is enough for a
/// random secret of that size (slow hashes are for passwords people choose).
public struct APIKeySecret: Sendable {
    public static let prefix = "crema_"

    /// The whole key, shown once.
    public let presented: String
    /// The public part: what listings, logs and revocation name.
    public let id: String

    /// A new random key.
    public static func generate() -> APIKeySecret {
        let id = [UInt8].random(count: 8).hexEncoded
        let secret = Base64URL.encode([UInt8].random(count: 32))
        return APIKeySecret(presented: prefix + id + "_" + secret, id: id)
    }

    /// The id a presented key claims, when it has the shape of a generated key.
    public static func id(of presented: Substring) -> String? {
        guard presented.hasPrefix(prefix), presented.utf8.count == prefix.utf8.count + 16 + 1 + 43 else { return nil }
        let rest = presented.dropFirst(prefix.count)
        let id = rest.prefix(16)
        guard id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }), rest.dropFirst(16).first == "_" else {
            return nil
        }
        return String(id)
    }

    /// SHA-256 of the whole key, as stored.
    public static func hash(_ presented: some StringProtocol) -> [UInt8] {
        Array(SHA256.hash(data: Data(presented.utf8)))
    }

    /// Compares two byte strings (hashes, keys) in time that does not depend on where they differ.
    public static func matches(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
