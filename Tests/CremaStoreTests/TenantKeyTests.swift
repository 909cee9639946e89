import CremaPostgres
import CremaTestSupport
import Testing

/// Citus distributes a table by `tenant_id` only when every unique constraint of it includes `tenant_id`, and with
/// `citus.enable_unsafe_triggers` creates row triggers, not statement triggers, on each shard (docs/scaling.md, "Past
/// one primary"). These read the migrated schema itself, so a new table or index is held to it without a list.
@Suite(.timeLimit(.minutes(2))) struct TenantKeyTests {
    /// The small shared tables, which become reference tables (a copy on every node) and so may keep keys of their own
    /// (docs/scaling.md, "Per table").
    static let referenceTables: Set<String> = ["tenants", "apps", "apns_keys", "api_keys", "customer_token_settings", "tenant_limits"]
    /// The Migrator's own tables, local to the coordinator.
    static let migratorTables: Set<String> = ["schema_migrations", "schema_repeatables"]

    static func rows(_ db: TestDatabase, _ query: PostgresQuery) async throws -> [PostgresRow] {
        try await db.pool.withConnection { try await $0.query(query) }
    }

    /// The public tables' indexes that meet `condition` (on `pg_index x`), each with the column it leads with.
    static func indexes(_ db: TestDatabase, where condition: StaticString) async throws -> [(table: String, index: String, first: String)] {
        try await rows(db, """
            SELECT t.relname AS table_name, i.relname AS index_name, coalesce(a.attname, '(an expression)') AS first_column
            FROM pg_index x
            JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
            WHERE n.nspname = 'public' AND t.relkind IN ('r', 'p') AND \(unescaped: condition)
            ORDER BY 1, 2
            """).map { row in
            (table: try row.decode("table_name", as: String.self), index: try row.decode("index_name", as: String.self),
             first: try row.decode("first_column", as: String.self))
        }
    }

    @Test("every table but the Migrator's own has a tenant_id column to be distributed or referenced by")
    func everyTableHasATenant() async throws {
        try await TestDatabase.with { db in
            let tables = try await Self.rows(db, """
                SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
                  AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
                """).map { try $0.decode("name", as: String.self) }
            #expect(Set(tables) == Self.migratorTables)
        }
    }

    @Test("every unique index of a tenant-owned table leads with tenant_id")
    func uniqueIndexesLeadWithTheTenant() async throws {
        try await TestDatabase.with { db in
            let indexes = try await Self.indexes(db, where: "(x.indisunique OR x.indisexclusion)")
            let owned = indexes.filter { !Self.referenceTables.contains($0.table) && !Self.migratorTables.contains($0.table) }
            #expect(Set(owned.map(\.table)).isSuperset(of: ["orders", "push_targets", "customer_tokens", "store_channels", "tenant_turns"]))
            for index in owned {
                #expect(index.first == "tenant_id", "\(index.table): \(index.index) leads with \(index.first)")
            }
        }
    }

    @Test("every index a claim reads (on pending or in-flight rows) of a tenant-owned table leads with tenant_id")
    func claimIndexesLeadWithTheTenant() async throws {
        try await TestDatabase.with { db in
            let indexes = try await Self.indexes(db, where: "pg_get_expr(x.indpred, x.indrelid) ~ '''pending''|''inflight''|finished_at IS NULL'")
            #expect(Set(indexes.map(\.index)).isSuperset(of: ["delivery_outbox_due", "webhook_deliveries_due", "webhook_deliveries_inflight_by_tenant"]))
            for index in indexes where !Self.referenceTables.contains(index.table) {
                #expect(index.first == "tenant_id", "\(index.table): \(index.index) leads with \(index.first)")
            }
        }
    }

    @Test("every trigger of a tenant-owned table is a row trigger, the kind Citus creates on each shard")
    func triggersAreRowTriggers() async throws {
        try await TestDatabase.with { db in
            let triggers = try await Self.rows(db, """
                SELECT c.relname AS table_name, t.tgname AS trigger_name, (t.tgtype & 1) = 1 AS per_row
                FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND NOT t.tgisinternal
                ORDER BY 1, 2
                """).map { row in
                (table: try row.decode("table_name", as: String.self), trigger: try row.decode("trigger_name", as: String.self),
                 perRow: try row.decode("per_row", as: Bool.self))
            }
            #expect(triggers.map(\.trigger).contains("order_events_append_only"))
            for trigger in triggers where !Self.referenceTables.contains(trigger.table) {
                #expect(trigger.perRow, "\(trigger.table): \(trigger.trigger) is a statement trigger")
            }
        }
    }
}
