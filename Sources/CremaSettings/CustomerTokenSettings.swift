import Foundation

/// How customer tokens are verified, from `CREMA_CUSTOMER_JWT_KEYS`, `CREMA_CUSTOMER_JWT_ISSUER` and
/// `CREMA_CUSTOMER_JWT_AUDIENCE` (docs/design.md §9.1). Secrets are kept as bytes and never printed.
public struct CustomerTokenSettings: Sendable, CustomStringConvertible {
    /// One verification key. Two keys of the same kind are tried in turn, which is how a rotation works.
    public enum Key: Sendable {
        /// A shared secret the brand's backend also holds (at least 32 bytes, RFC 7518 §3.2).
        case hs256(secret: [UInt8])
        /// The PEM text of the P-256 public key whose private half the brand's backend signs with.
        case es256(pem: String)
    }

    public var keys: [Key]
    public var issuer: String
    public var audience: String

    public init(keys: [Key], issuer: String, audience: String) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
    }

    /// nil when `CREMA_CUSTOMER_JWT_KEYS` is unset or empty (no customer tokens accepted). `es256:` paths
    /// are read here, so a missing file stops `crema serve` at start, not at the first customer request.
    public init?(environment: [String: String]) throws(ConfigurationError) {
        guard let text = environment["CREMA_CUSTOMER_JWT_KEYS"], !text.isEmpty else { return nil }
        var keys: [Key] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            if entry.hasPrefix("hs256:") {
                let secret = Array(entry.dropFirst(6).utf8)
                guard secret.count >= 32 else {
                    throw .invalid("CREMA_CUSTOMER_JWT_KEYS", "has an hs256 secret shorter than 32 bytes (RFC 7518 requires 256 bits)")
                }
                keys.append(.hs256(secret: secret))
            } else if entry.hasPrefix("es256:") {
                let path = String(entry.dropFirst(6))
                guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw .invalid("CREMA_CUSTOMER_JWT_KEYS", "names an es256 key file that cannot be read: \(path)")
                }
                keys.append(.es256(pem: pem))
            } else {
                throw .invalid("CREMA_CUSTOMER_JWT_KEYS", "has an entry that is neither hs256:<secret> nor es256:<path to a PEM public key>")
            }
        }
        guard !keys.isEmpty else { return nil }
        guard let issuer = environment["CREMA_CUSTOMER_JWT_ISSUER"], !issuer.isEmpty else {
            throw .invalid("CREMA_CUSTOMER_JWT_ISSUER", "missing (the 'iss' customer tokens must carry)")
        }
        guard let audience = environment["CREMA_CUSTOMER_JWT_AUDIENCE"], !audience.isEmpty else {
            throw .invalid("CREMA_CUSTOMER_JWT_AUDIENCE", "missing (the 'aud' customer tokens must carry)")
        }
        self.init(keys: keys, issuer: issuer, audience: audience)
    }

    public var description: String {
        let kinds = keys.map { key in
            switch key {
            case .hs256: "hs256"
            case .es256: "es256"
            }
        }
        return "CustomerTokenSettings(keys: \(kinds.joined(separator: ",")), issuer: \(issuer), audience: \(audience))"
    }
}
