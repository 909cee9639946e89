import CremaCore
public import CremaClock
public import CremaPostgres
public import Foundation

/// A tenant (a brand) as the admin API shows it.
public struct TenantRecord: Sendable, Hashable {
    public var id: String
    public var name: String
    /// The app a token registered without naming one belongs to.
    public var defaultBundleID: String?
    public var createdAt: Date
}

/// An iOS app of a tenant: its bundle id (the APNs topic) and the Apple team whose keys sign for it.
public struct AppRecord: Sendable, Hashable {
    public var tenant: String
    public var bundleID: String
    public var teamID: String
    public var createdAt: Date
}

/// Tenants and their apps: created and listed by administrators, read by everything that needs to know whose
/// data it touches.
public struct TenantRepository: Repository {
    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    /// Creates or renames a tenant; `created` tells which.
    public func put(id: String, name: String) async throws(StoreError) -> (tenant: TenantRecord, created: Bool) {
        try await database {
            try await pool.withConnection { connection in
                let now = clock.now
                let row = try await connection.query(
                    """
                    INSERT INTO tenants (tenant_id, name, created_at, updated_at) VALUES (\(id), \(name), \(now), \(now))
                    ON CONFLICT (tenant_id) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at
                    RETURNING tenant_id, name, default_bundle_id, created_at, (xmax = 0) AS created
                    """)[0]
                return (try Self.tenant(from: row), try row.decode("created", as: Bool.self))
            }
        }
    }

    /// The tenant, or nil.
    public func tenant(id: String) async throws(StoreError) -> TenantRecord? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT tenant_id, name, default_bundle_id, created_at FROM tenants WHERE tenant_id = \(id)"
                ).first.map(Self.tenant(from:))
            }
        }
    }

    /// Every tenant, or only `only` when given (a tenant's own admin key sees its tenant alone).
    public func tenants(only: String?) async throws(StoreError) -> [TenantRecord] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT tenant_id, name, default_bundle_id, created_at FROM tenants
                    WHERE \(only)::text IS NULL OR tenant_id = \(only) ORDER BY tenant_id
                    """
                ).map(Self.tenant(from:))
            }
        }
    }

    /// Creates an app or changes its team; the tenant's first app becomes its default (not in the tenant `default`,
    /// whose default app is `CREMA_APNS_TOPIC`). A bundle id is the tenant's own: another tenant's app of the same
    /// bundle id is neither looked at nor changed, so the answer is the same whether one exists or not.
    public func putApp(tenant: String, bundleID: String, teamID: String) async throws(StoreError) -> (app: AppRecord, created: Bool) {
        try await database {
            try await pool.withTransaction { connection in
                guard try await !connection.query("SELECT 1 FROM tenants WHERE tenant_id = \(tenant) FOR UPDATE").isEmpty else {
                    throw StoreError.unknownTenant(tenant)
                }
                let now = clock.now
                let row = try await connection.query(
                    """
                    INSERT INTO apps (tenant_id, bundle_id, team_id, created_at, updated_at) VALUES (\(tenant), \(bundleID), \(teamID), \(now), \(now))
                    ON CONFLICT (tenant_id, bundle_id) DO UPDATE SET team_id = EXCLUDED.team_id, updated_at = EXCLUDED.updated_at
                    RETURNING tenant_id, bundle_id, team_id, created_at, (xmax = 0) AS created
                    """)[0]
                try await connection.query(
                    """
                    UPDATE tenants SET default_bundle_id = \(bundleID)
                    WHERE tenant_id = \(tenant) AND tenant_id <> 'default' AND default_bundle_id IS NULL
                    """)
                return (try Self.app(from: row), try row.decode("created", as: Bool.self))
            }
        }
    }

    /// The tenant's apps, by bundle id.
    public func apps(tenant: String) async throws(StoreError) -> [AppRecord] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT tenant_id, bundle_id, team_id, created_at FROM apps WHERE tenant_id = \(tenant) ORDER BY bundle_id"
                ).map(Self.app(from:))
            }
        }
    }

    static func tenant(from row: PostgresRow) throws -> TenantRecord {
        TenantRecord(
            id: try row.decode("tenant_id"), name: try row.decode("name"),
            defaultBundleID: try row.decode("default_bundle_id", as: String?.self), createdAt: try row.decode("created_at"))
    }

    static func app(from row: PostgresRow) throws -> AppRecord {
        AppRecord(
            tenant: try row.decode("tenant_id"), bundleID: try row.decode("bundle_id"), teamID: try row.decode("team_id"),
            createdAt: try row.decode("created_at"))
    }
}
