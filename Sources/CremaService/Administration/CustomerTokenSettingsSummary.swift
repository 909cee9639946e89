public import Foundation

/// A tenant's customer token settings as they may be shown: each key by its algorithm and a fingerprint, never the
/// secret (opening a sealed secret to fingerprint it needs the master key, which only the service holds).
public struct CustomerTokenSettingsSummary: Sendable, Hashable {
    /// One key: its algorithm and the first 16 hex digits of the SHA-256 of its secret or public key.
    public struct Key: Sendable, Hashable {
        public var algorithm: String
        public var fingerprint: String

        public init(algorithm: String, fingerprint: String) {
            self.algorithm = algorithm
            self.fingerprint = fingerprint
        }
    }

    public var tenant: String
    public var issuer: String
    public var audience: String
    public var keys: [Key]
    public var updatedAt: Date

    public init(tenant: String, issuer: String, audience: String, keys: [Key], updatedAt: Date) {
        self.tenant = tenant
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self.updatedAt = updatedAt
    }
}
