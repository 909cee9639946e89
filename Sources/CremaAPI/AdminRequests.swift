public import Foundation

/// `PUT /v1/admin/tenants/{tenant}`: create or rename a tenant (a brand).
public struct TenantPutRequest: Codable, Sendable {
    public var name: String

    public init(name: String) { self.name = name }
}

/// `PUT /v1/admin/tenants/{tenant}/apps/{bundle_id}`: an iOS app and the Apple team whose keys sign for it.
public struct AppPutRequest: Codable, Sendable {
    public var teamID: String
    enum CodingKeys: String, CodingKey { case teamID = "team_id" }

    public init(teamID: String) { self.teamID = teamID }
}

/// `POST /v1/admin/tenants/{tenant}/apps/{bundle_id}/apns-keys`: a `.p8` key, as PEM text (kept sealed under
/// `CREMA_MASTER_KEY`) or as a path on the dispatcher's machine; active at once unless `active` is false.
public struct APNsKeyCreateRequest: Codable, Sendable {
    public var keyID: String
    public var p8: String?
    public var p8Path: String?
    public var active: Bool?
    enum CodingKeys: String, CodingKey { case keyID = "key_id", p8, p8Path = "p8_path", active }

    public init(keyID: String, p8: String? = nil, p8Path: String? = nil, active: Bool? = nil) {
        self.keyID = keyID
        self.p8 = p8
        self.p8Path = p8Path
        self.active = active
    }
}

/// `POST /v1/admin/tenants/{tenant}/api-keys`: a key of one role, for every store of the tenant or only some,
/// optionally expiring.
public struct APIKeyCreateRequest: Codable, Sendable {
    public var role: String
    public var stores: [String]?
    public var expiresAt: Date?
    enum CodingKeys: String, CodingKey { case role, stores, expiresAt = "expires_at" }

    public init(role: String, stores: [String]? = nil, expiresAt: Date? = nil) {
        self.role = role
        self.stores = stores
        self.expiresAt = expiresAt
    }
}

/// `PUT /v1/admin/tenants/{tenant}/customer-tokens`: how the tenant's customer tokens are verified, replaced whole
/// (list the old and the new key during a rotation).
public struct CustomerTokenSettingsPutRequest: Codable, Sendable {
    /// One key: an HS256 shared secret (at least 32 bytes) or an ES256 public key in PEM.
    public struct Key: Codable, Sendable {
        public var algorithm: String
        public var secret: String?
        public var publicKey: String?
        enum CodingKeys: String, CodingKey { case algorithm, secret, publicKey = "public_key" }

        public init(algorithm: String, secret: String? = nil, publicKey: String? = nil) {
            self.algorithm = algorithm
            self.secret = secret
            self.publicKey = publicKey
        }
    }

    public var issuer: String
    public var audience: String
    public var keys: [Key]

    public init(issuer: String, audience: String, keys: [Key]) {
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
    }
}
