public import CremaCore
public import CremaClock
public import CremaPostgres
public import Foundation

/// An API key Crema generated, as stored: its public id, whose it is and what it may do, and a SHA-256 of the
/// whole key (the key itself is shown once and never kept).
public struct StoredAPIKey: Sendable, Hashable {
    public var id: String
    public var tenant: String
    public var role: Role
    /// nil: every store of the tenant.
    public var stores: [String]?
    public var hash: [UInt8]
    public var createdAt: Date
    public var expiresAt: Date?
    public var revokedAt: Date?
    public var rotatedFrom: String?

    public init(
        id: String, tenant: String, role: Role, stores: [String]?, hash: [UInt8], createdAt: Date, expiresAt: Date?, revokedAt: Date?,
        rotatedFrom: String?
    ) {
        self.id = id
        self.tenant = tenant
        self.role = role
        self.stores = stores
        self.hash = hash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.rotatedFrom = rotatedFrom
    }
}

/// API keys: issued, rotated and revoked by administrators, looked up by id on every request that presents one.
public struct APIKeyRepository: Repository {
    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    private static let columns: StaticString = """
        key_id, tenant_id, role, array_to_json(stores)::text AS stores, encode(key_hash, 'base64') AS hash, created_at, expires_at,
        revoked_at, rotated_from
        """

    /// Stores a new key's hash.
    public func insert(_ key: StoredAPIKey) async throws(StoreError) {
        let hash = Data(key.hash).base64EncodedString()
        let stores = key.stores.map(PostgresTextArray.init)
        try await database {
            try await pool.withConnection { connection in
                guard try await !connection.query("SELECT 1 FROM tenants WHERE tenant_id = \(key.tenant)").isEmpty else {
                    throw StoreError.unknownTenant(key.tenant)
                }
                _ = try await connection.query(
                    """
                    INSERT INTO api_keys (key_id, tenant_id, role, stores, key_hash, expires_at, rotated_from, created_at)
                    VALUES (\(key.id), \(key.tenant), \(key.role.rawValue), \(stores)::text[], decode(\(hash), 'base64'), \(key.expiresAt),
                            \(key.rotatedFrom), \(key.createdAt))
                    """)
            }
        }
    }

    /// The key with this id, whatever its state (the caller tells expired and revoked apart).
    public func key(id: String) async throws(StoreError) -> StoredAPIKey? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query("SELECT \(unescaped: Self.columns) FROM api_keys WHERE key_id = \(id)").first.map(Self.key(from:))
            }
        }
    }

    /// A tenant's keys, newest first.
    public func keys(tenant: String) async throws(StoreError) -> [StoredAPIKey] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM api_keys WHERE tenant_id = \(tenant) ORDER BY created_at DESC, key_id"
                ).map(Self.key(from:))
            }
        }
    }

    /// Revokes a tenant's key; nil when the tenant has no such key. Revoking twice keeps the first time.
    public func revoke(id: String, tenant: String) async throws(StoreError) -> StoredAPIKey? {
        try await database {
            // Read back by a second statement, not RETURNING: the columns use array_to_json, which is not immutable, and
            // Citus refuses such a function in the RETURNING of a write to a reference table (scripts/citus-test).
            try await pool.withConnection { connection in
                try await connection.pipeline([
                    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, \(clock.now)) WHERE tenant_id = \(tenant) AND key_id = \(id)",
                    "SELECT \(unescaped: Self.columns) FROM api_keys WHERE tenant_id = \(tenant) AND key_id = \(id)",
                ]).last?.first.map(Self.key(from:))
            }
        }
    }

    static func key(from row: PostgresRow) throws -> StoredAPIKey {
        guard let role = Role(rawValue: try row.decode("role")) else { throw PostgresError(.decoding, detail: "unknown role") }
        guard let hash = Data(base64Encoded: try row.decode("hash", as: String.self)) else {
            throw PostgresError(.decoding, detail: "key_hash is not base64")
        }
        let stores = try row.decode("stores", as: PostgresJSON?.self)?.decode([String].self)
        return StoredAPIKey(
            id: try row.decode("key_id"), tenant: try row.decode("tenant_id"), role: role, stores: stores, hash: Array(hash),
            createdAt: try row.decode("created_at"), expiresAt: try row.decode("expires_at", as: Date?.self),
            revokedAt: try row.decode("revoked_at", as: Date?.self), rotatedFrom: try row.decode("rotated_from", as: String?.self))
    }
}
