public import Foundation

/// A tenant as the admin API answers it.
public struct TenantResponse: Codable, Sendable, Hashable {
    public var id: String
    public var name: String
    public var defaultBundleID: String?
    public var createdAt: Date
    enum CodingKeys: String, CodingKey { case id, name, defaultBundleID = "default_bundle_id", createdAt = "created_at" }

    public init(id: String, name: String, defaultBundleID: String?, createdAt: Date) {
        self.id = id
        self.name = name
        self.defaultBundleID = defaultBundleID
        self.createdAt = createdAt
    }
}

/// `GET /v1/admin/tenants`.
public struct TenantListResponse: Codable, Sendable, Hashable {
    public var tenants: [TenantResponse]

    public init(tenants: [TenantResponse]) { self.tenants = tenants }
}

/// An app as the admin API answers it.
public struct AppResponse: Codable, Sendable, Hashable {
    public var tenant: String
    public var bundleID: String
    public var teamID: String
    public var createdAt: Date
    enum CodingKeys: String, CodingKey { case tenant, bundleID = "bundle_id", teamID = "team_id", createdAt = "created_at" }

    public init(tenant: String, bundleID: String, teamID: String, createdAt: Date) {
        self.tenant = tenant
        self.bundleID = bundleID
        self.teamID = teamID
        self.createdAt = createdAt
    }
}

/// `GET /v1/admin/tenants/{tenant}/apps`.
public struct AppListResponse: Codable, Sendable, Hashable {
    public var apps: [AppResponse]

    public init(apps: [AppResponse]) { self.apps = apps }
}

/// An APNs key as listed: never the key, only its fingerprint, where it is kept, and whether it signs.
public struct APNsKeyResponse: Codable, Sendable, Hashable {
    public var bundleID: String
    public var keyID: String
    public var teamID: String
    /// `database` (sealed under the master key) or `file`.
    public var storage: String
    public var fingerprint: String
    /// `active`, `inactive`, `retired`, or `rejected` (active, but APNs refused it: its pushes wait).
    public var state: String
    public var createdAt: Date
    public var activatedAt: Date?
    public var retiredAt: Date?
    public var rejectedAt: Date?
    public var rejectedReason: String?
    enum CodingKeys: String, CodingKey {
        case bundleID = "bundle_id", keyID = "key_id", teamID = "team_id", storage, fingerprint, state, createdAt = "created_at"
        case activatedAt = "activated_at", retiredAt = "retired_at", rejectedAt = "rejected_at", rejectedReason = "rejected_reason"
    }

    public init(
        bundleID: String, keyID: String, teamID: String, storage: String, fingerprint: String, state: String, createdAt: Date,
        activatedAt: Date?, retiredAt: Date?, rejectedAt: Date?, rejectedReason: String?
    ) {
        self.bundleID = bundleID
        self.keyID = keyID
        self.teamID = teamID
        self.storage = storage
        self.fingerprint = fingerprint
        self.state = state
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.retiredAt = retiredAt
        self.rejectedAt = rejectedAt
        self.rejectedReason = rejectedReason
    }
}

/// `GET /v1/admin/tenants/{tenant}/apns-keys`.
public struct APNsKeyListResponse: Codable, Sendable, Hashable {
    public var keys: [APNsKeyResponse]

    public init(keys: [APNsKeyResponse]) { self.keys = keys }
}

/// An API key as listed (and, once, as issued: only then does `key` carry the secret).
public struct APIKeyResponse: Codable, Sendable, Hashable {
    public var id: String
    public var tenant: String
    public var role: String
    public var stores: [String]?
    public var createdAt: Date
    public var expiresAt: Date?
    public var revokedAt: Date?
    public var rotatedFrom: String?
    /// The whole key: present only in the answer that issued it. Crema keeps a hash.
    public var key: String?
    enum CodingKeys: String, CodingKey {
        case id, tenant, role, stores, createdAt = "created_at", expiresAt = "expires_at", revokedAt = "revoked_at"
        case rotatedFrom = "rotated_from", key
    }

    public init(
        id: String, tenant: String, role: String, stores: [String]?, createdAt: Date, expiresAt: Date?, revokedAt: Date?,
        rotatedFrom: String?, key: String?
    ) {
        self.id = id
        self.tenant = tenant
        self.role = role
        self.stores = stores
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.rotatedFrom = rotatedFrom
        self.key = key
    }
}

/// `GET /v1/admin/tenants/{tenant}/api-keys`.
public struct APIKeyListResponse: Codable, Sendable, Hashable {
    public var keys: [APIKeyResponse]

    public init(keys: [APIKeyResponse]) { self.keys = keys }
}

/// A tenant's customer token settings as answered: the keys by algorithm and fingerprint, never the secrets.
public struct CustomerTokenSettingsResponse: Codable, Sendable, Hashable {
    /// One key: its algorithm and the first 16 hex digits of the SHA-256 of its secret or public key.
    public struct Key: Codable, Sendable, Hashable {
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
    enum CodingKeys: String, CodingKey { case tenant, issuer, audience, keys, updatedAt = "updated_at" }

    public init(tenant: String, issuer: String, audience: String, keys: [Key], updatedAt: Date) {
        self.tenant = tenant
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self.updatedAt = updatedAt
    }
}
