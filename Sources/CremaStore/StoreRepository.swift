public import CremaCore
public import CremaClock
public import CremaPostgres

/// The coffee shops orders are placed at: created or renamed by the POS, read by everything else.
public struct StoreRepository: Repository {
    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    /// The columns `store(from:)` reads.
    static let columns: StaticString =
        "store_id, name, timezone, created_at, updated_at, ready_expiry_minutes, queued_expiry_minutes, latitude, longitude"

    /// Creates or renames one of `tenant`'s stores; `created` tells which. Store ids are unique within a tenant. A nil
    /// expiry limit keeps the store's current one (the default, `ExpiryLimits.standard`, for a new store). `location`
    /// nil keeps the store's place (none for a new store), `.some(nil)` clears it, a value replaces it.
    public func put(
        id: String, name: String, timezone: String, tenant: String, readyExpiryMinutes: Int? = nil, queuedExpiryMinutes: Int? = nil,
        location: StoreLocation?? = nil
    ) async throws(StoreError) -> (store: Store, created: Bool) {
        let keepLocation = location == nil
        let place = location ?? nil
        return try await database {
            try await pool.withConnection { connection in
                guard try await !connection.query("SELECT 1 FROM tenants WHERE tenant_id = \(tenant)").isEmpty else {
                    throw StoreError.unknownTenant(tenant)
                }
                let known = try await connection.query("SELECT 1 FROM pg_timezone_names WHERE name = \(timezone)")
                guard !known.isEmpty else { throw StoreError.invalidTimezone(timezone) }
                let now = clock.now
                let rows = try await connection.query(
                    """
                    INSERT INTO stores (tenant_id, store_id, name, timezone, ready_expiry_minutes, queued_expiry_minutes, latitude, longitude,
                                        created_at, updated_at)
                    VALUES (\(tenant), \(id), \(name), \(timezone), \(readyExpiryMinutes ?? ExpiryLimits.standard.readyMinutes),
                            \(queuedExpiryMinutes ?? ExpiryLimits.standard.queuedMinutes), \(place?.latitude), \(place?.longitude), \(now), \(now))
                    ON CONFLICT (tenant_id, store_id) DO UPDATE SET name = EXCLUDED.name, timezone = EXCLUDED.timezone, updated_at = EXCLUDED.updated_at,
                        ready_expiry_minutes = coalesce(\(readyExpiryMinutes), stores.ready_expiry_minutes),
                        queued_expiry_minutes = coalesce(\(queuedExpiryMinutes), stores.queued_expiry_minutes),
                        latitude = CASE WHEN \(keepLocation)::boolean THEN stores.latitude ELSE EXCLUDED.latitude END,
                        longitude = CASE WHEN \(keepLocation)::boolean THEN stores.longitude ELSE EXCLUDED.longitude END
                    RETURNING \(unescaped: Self.columns), (xmax = 0) AS created
                    """)
                let row = rows[0]
                return (try Self.store(from: row), try row.decode("created", as: Bool.self))
            }
        }
    }

    /// The store, when `scope` reaches it.
    public func store(id: String, in scope: TenantScope) async throws(StoreError) -> Store? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM stores WHERE \(scope.sql) AND store_id = \(id)"
                ).first.map(Self.store(from:))
            }
        }
    }

    static func store(from row: PostgresRow) throws -> Store {
        Store(
            id: try row.decode("store_id"), name: try row.decode("name"), timezone: try row.decode("timezone"),
            createdAt: try row.decode("created_at"), updatedAt: try row.decode("updated_at"),
            expiryLimits: ExpiryLimits(readyMinutes: try row.decode("ready_expiry_minutes"), queuedMinutes: try row.decode("queued_expiry_minutes")),
            location: try location(from: row))
    }

    /// The store's place from its `latitude` and `longitude` columns (both or neither, by the table's check).
    static func location(from row: PostgresRow) throws -> StoreLocation? {
        guard let latitude = try row.decode("latitude", as: Double?.self), let longitude = try row.decode("longitude", as: Double?.self) else {
            return nil
        }
        return StoreLocation(latitude: latitude, longitude: longitude)
    }
}
