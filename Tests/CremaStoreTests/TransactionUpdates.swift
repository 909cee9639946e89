import CremaPostgres

/// The rows of one tenant's table that the current transaction has updated, and how many of those updates were HOT
/// (rewritten in place, no index entry): the backend's own counters, exact and read before the statistics are
/// reported. They are read through a row of the tenant, by its `tableoid`: on plain PostgreSQL that is the table, and
/// on Citus the tenant's shard on its worker, read by the same worker connection that ran the transaction's updates
/// there (where the counters are), since the coordinator holds no rows and counts nothing.
struct TransactionUpdates: Equatable {
    var updated: Int
    var hot: Int

    /// The counters of `table` (a table with a `tenant_id` column) for `tenant`, which must hold a row of it.
    static func read(_ table: StaticString, tenant: String, on connection: PostgresConnection) async throws -> TransactionUpdates {
        let row = try await connection.query(
            """
            SELECT pg_stat_get_xact_tuples_updated(tableoid) AS updated, pg_stat_get_xact_tuples_hot_updated(tableoid) AS hot
            FROM \(unescaped: table) WHERE tenant_id = \(tenant) LIMIT 1
            """)[0]
        return TransactionUpdates(updated: try row.decode("updated", as: Int.self), hot: try row.decode("hot", as: Int.self))
    }

    static func - (after: TransactionUpdates, before: TransactionUpdates) -> TransactionUpdates {
        TransactionUpdates(updated: after.updated - before.updated, hot: after.hot - before.hot)
    }
}
