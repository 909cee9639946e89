public import CremaPostgres

/// Crema's schema spread over a Citus cluster (issue #44, docs/scaling.md "Past one primary"): every tenant-owned
/// table distributed by `tenant_id` and co-located with `stores`, so one tenant's rows, joins and foreign keys stay on
/// one node; the small shared tables made reference tables, a copy on every node. `crema migrate` runs it after the
/// numbered migrations on a database where the `citus` extension is installed, and on no other: on plain PostgreSQL
/// nothing here runs. All of Crema's Citus SQL is in this one type.
///
/// The order is what makes it work. A reference table made while a table with a foreign key to it is still local
/// turns that table into a Citus local table, which `create_distributed_table` then refuses, so every foreign key that
/// touches a table not yet placed is dropped first and re-created, as it was, once all of them are placed. It all runs
/// in one transaction: a failure leaves the schema as it was. A table already placed is left alone, so a second run
/// changes nothing, and a table a later migration adds is placed by the next run.
public struct CitusDistribution: Sendable {
    /// The small shared tables, read by key on each request and written only by administrators: a copy on every node.
    /// Every other table with a `tenant_id` column (the Migrator's own have none) is distributed by it.
    public static let referenceTables: [String] = ["tenants", "apps", "apns_keys", "api_keys", "customer_token_settings", "tenant_limits"]
    /// The table every distributed table is co-located with.
    public static let anchor = "stores"

    /// Where one table of the schema lives.
    public struct Placement: Sendable, Equatable {
        /// How Citus holds a table: `distributed` (hash, by `column`), `reference`, `citus local`, or `local` (not Citus's).
        public var table: String
        public var kind: String
        /// The distribution column; empty unless distributed.
        public var column: String
        /// The co-location group; 0 when not Citus's.
        public var colocation: Int
        public var shards: Int
        /// Where `distribute` puts it: `reference` for the shared tables, `distributed` for the others with a
        /// `tenant_id`, `local` for the rest (the Migrator's own tables, on the coordinator).
        public var expected: String

        public init(table: String, kind: String, column: String = "", colocation: Int = 0, shards: Int = 0, expected: String) {
            self.table = table
            self.kind = kind
            self.expected = expected
            self.column = column
            self.colocation = colocation
            self.shards = shards
        }
    }

    public init() {}

    /// Whether the database has the `citus` extension (then `crema migrate` distributes; otherwise it never does).
    public func isInstalled(on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus")
            .first?.decode("citus", as: Bool.self) ?? false
    }

    /// Every table of the public schema and how Citus holds it, by name.
    public func placements(on connection: PostgresConnection) async throws -> [Placement] {
        try await connection.query(
            """
            SELECT c.relname AS table_name,
                   CASE WHEN p.partmethod = 'h' THEN 'distributed'
                        WHEN p.partmethod = 'n' AND p.repmodel = 't' THEN 'reference'
                        WHEN p.partmethod IS NOT NULL THEN 'citus local'
                        ELSE 'local' END AS kind,
                   coalesce(CASE WHEN p.partmethod = 'h' THEN column_to_column_name(p.logicalrelid, p.partkey) END, '') AS column_name,
                   coalesce(p.colocationid, 0) AS colocation,
                   (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = c.oid)::integer AS shards,
                   EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS has_tenant
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
            ORDER BY c.relname
            """
        ).map { row in
            let table: String = try row.decode("table_name")
            let expected = Self.referenceTables.contains(table) ? "reference" : try row.decode("has_tenant", as: Bool.self) ? "distributed" : "local"
            return Placement(
                table: table, kind: try row.decode("kind"), column: try row.decode("column_name"),
                colocation: try row.decode("colocation", as: Int.self), shards: try row.decode("shards", as: Int.self), expected: expected)
        }
    }

    /// Places every table not yet placed and returns what it did, one line a step (empty: nothing to do).
    /// `order_events`' append-only guard is a row trigger that reads only its own row and one setting, so it is safe on
    /// a shard; Citus creates it on every shard when `citus.enable_unsafe_triggers` is on (TenantKeyTests holds every
    /// trigger of a tenant-owned table to that kind).
    public func distribute(on connection: PostgresConnection) async throws -> [String] {
        let before = try await placements(on: connection)
        let owned = before.filter { $0.expected == "distributed" }.map(\.table)
        let placed = Set(before.filter { $0.kind == "distributed" || $0.kind == "reference" }.map(\.table))
        let present = Set(before.map(\.table))
        let toDistribute = ([Self.anchor] + owned.filter { $0 != Self.anchor }).filter { present.contains($0) && !placed.contains($0) }
        let toReference = Self.referenceTables.filter { present.contains($0) && !placed.contains($0) }
        if let stray = before.first(where: { $0.kind == "citus local" && (toDistribute.contains($0.table) || toReference.contains($0.table)) }) {
            throw CitusDistributionError.citusLocalTable(stray.table)
        }
        guard !toDistribute.isEmpty || !toReference.isEmpty else { return [] }

        var done: [String] = []
        try await connection.simpleQuery("BEGIN")
        do {
            try await connection.simpleQuery(
                "SET LOCAL citus.enable_unsafe_triggers TO on; SET LOCAL citus.multi_shard_modify_mode TO 'sequential'; "
                    + "SET LOCAL statement_timeout TO 0; SET LOCAL lock_timeout TO 0")
            let keys = try await foreignKeys(touching: Set(toDistribute + toReference), on: connection)
            for key in keys {
                try await connection.simpleQuery("ALTER TABLE \(try Self.identifier(key.table)) DROP CONSTRAINT \(try Self.identifier(key.name))")
            }
            if !keys.isEmpty { done.append("dropped \(keys.count) foreign keys to re-create them after") }
            for table in toDistribute {
                let colocation = table == Self.anchor ? "default" : Self.anchor
                _ = try await connection.query(
                    "SELECT create_distributed_table(\(table)::regclass, 'tenant_id', colocate_with => \(colocation))")
                _ = try await connection.query("SELECT truncate_local_data_after_distributing_table(\(table)::regclass)")
                done.append("distributed \(table) by tenant_id" + (table == Self.anchor ? "" : ", co-located with \(Self.anchor)"))
            }
            for table in toReference {
                _ = try await connection.query("SELECT create_reference_table(\(table)::regclass)")
                _ = try await connection.query("SELECT truncate_local_data_after_distributing_table(\(table)::regclass)")
                done.append("made \(table) a reference table")
            }
            for key in keys {
                try await connection.simpleQuery(
                    "ALTER TABLE \(try Self.identifier(key.table)) ADD CONSTRAINT \(try Self.identifier(key.name)) \(key.definition)")
            }
            if !keys.isEmpty { done.append("re-created \(keys.count) foreign keys") }
            try await connection.simpleQuery("COMMIT")
        } catch {
            try? await connection.simpleQuery("ROLLBACK")
            throw error
        }
        return done
    }

    /// A foreign key as `pg_get_constraintdef` writes it, to be re-created word for word.
    private struct ForeignKey {
        var table: String
        var name: String
        var definition: String
    }

    /// The foreign keys of the public schema whose table or referenced table is in `tables`.
    private func foreignKeys(touching tables: Set<String>, on connection: PostgresConnection) async throws -> [ForeignKey] {
        try await connection.query(
            """
            SELECT t.relname AS table_name, k.conname AS name, pg_get_constraintdef(k.oid) AS definition, r.relname AS referenced
            FROM pg_constraint k
            JOIN pg_class t ON t.oid = k.conrelid
            JOIN pg_class r ON r.oid = k.confrelid
            WHERE k.contype = 'f' AND k.connamespace = 'public'::regnamespace
            ORDER BY t.relname, k.conname
            """
        ).compactMap { row in
            let key = ForeignKey(table: try row.decode("table_name"), name: try row.decode("name"), definition: try row.decode("definition"))
            let referenced: String = try row.decode("referenced")
            return tables.contains(key.table) || tables.contains(referenced) ? key : nil
        }
    }

    /// A table or constraint name of Crema's schema, double-quoted; anything else is refused rather than quoted.
    private static func identifier(_ name: String) throws(CitusDistributionError) -> String {
        guard !name.isEmpty, name.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }) else {
            throw .unexpectedName(name)
        }
        return "\"\(name)\""
    }
}
