public import CremaClock
public import CremaPostgres
public import Foundation

/// How one tenant's customer tokens are verified, as stored: the `iss` and `aud` they carry and the keys, an
/// HS256 secret sealed under the master key, an ES256 public key as PEM.
public struct StoredCustomerTokenSettings: Sendable, Hashable {
    /// One verification key as stored.
    public enum Key: Sendable, Hashable, Codable {
        case hs256(sealed: [UInt8])
        case es256(publicKeyPEM: String)

        enum CodingKeys: String, CodingKey { case algorithm, sealed, public_key }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch try container.decode(String.self, forKey: .algorithm) {
            case "hs256":
                guard let bytes = Data(base64Encoded: try container.decode(String.self, forKey: .sealed)) else {
                    throw DecodingError.dataCorruptedError(forKey: .sealed, in: container, debugDescription: "not base64")
                }
                self = .hs256(sealed: Array(bytes))
            case "es256": self = .es256(publicKeyPEM: try container.decode(String.self, forKey: .public_key))
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .algorithm, in: container, debugDescription: "unknown algorithm \(other)")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .hs256(let sealed):
                try container.encode("hs256", forKey: .algorithm)
                try container.encode(Data(sealed).base64EncodedString(), forKey: .sealed)
            case .es256(let pem):
                try container.encode("es256", forKey: .algorithm)
                try container.encode(pem, forKey: .public_key)
            }
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

/// Tenants' customer token settings: replaced whole by administrators (two keys during a rotation), read by
/// every instance's verifier directory.
public struct CustomerTokenSettingsRepository: Repository {
    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    public func put(_ settings: StoredCustomerTokenSettings) async throws(StoreError) -> StoredCustomerTokenSettings {
        let keys = try await database { try PostgresJSON(encoding: settings.keys) }
        return try await database {
            try await pool.withConnection { connection in
                guard try await !connection.query("SELECT 1 FROM tenants WHERE tenant_id = \(settings.tenant)").isEmpty else {
                    throw StoreError.unknownTenant(settings.tenant)
                }
                return try Self.settings(
                    from: try await connection.query(
                        """
                        INSERT INTO customer_token_settings (tenant_id, issuer, audience, keys, updated_at)
                        VALUES (\(settings.tenant), \(settings.issuer), \(settings.audience), \(keys)::jsonb, \(clock.now))
                        ON CONFLICT (tenant_id) DO UPDATE
                            SET issuer = EXCLUDED.issuer, audience = EXCLUDED.audience, keys = EXCLUDED.keys, updated_at = EXCLUDED.updated_at
                        RETURNING tenant_id, issuer, audience, keys::text AS keys, updated_at
                        """)[0])
            }
        }
    }

    /// Every tenant's settings.
    public func all() async throws(StoreError) -> [StoredCustomerTokenSettings] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT tenant_id, issuer, audience, keys::text AS keys, updated_at FROM customer_token_settings ORDER BY tenant_id"
                ).map(Self.settings(from:))
            }
        }
    }

    static func settings(from row: PostgresRow) throws -> StoredCustomerTokenSettings {
        StoredCustomerTokenSettings(
            tenant: try row.decode("tenant_id"), issuer: try row.decode("issuer"), audience: try row.decode("audience"),
            keys: try row.decode("keys", as: PostgresJSON.self).decode([StoredCustomerTokenSettings.Key].self),
            updatedAt: try row.decode("updated_at"))
    }
}
