public import CremaAPNsProtocol
public import CremaCore
public import Foundation
public import CremaClock
public import CremaPostgres

/// One change on a store's stream: the order as it is now, with its stored projection, and the stream cursor
/// of its latest event.
public struct StreamChange: Sendable, Hashable {
    public var cursor: Int64
    public var order: Order
    public var projection: JSONValue?
}

/// The dashboard stream's reads (changes after a cursor, the head) and its single-use tickets.
public struct StreamRepository: Repository {
    public let pool: PostgresPool
    /// Where the reads that may come from a standby go (`CREMA_DATABASE_READ_URL`).
    public let reads: StandbyReads

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, reads: StandbyReads? = nil, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
        self.reads = reads ?? StandbyReads(primary: pool)
    }

    /// The most changes one catch-up read returns; a subscriber that is further behind reads again at once.
    public static let streamPageSize = 200

    /// Orders of `store` changed after `cursor`, one per order (several changes to one order since the cursor
    /// collapse into its latest state), in cursor order.
    ///
    /// The cursor is the store's stream position (`order_events.stream_seq`), which each event takes on the store's
    /// row and holds until it commits (migration 023): a store's positions become visible in their order, so once a
    /// read has seen a position, no event with a lower one can appear later, on one node, a standby or a Citus worker.
    public func streamChanges(store: String, tenant: String, after cursor: Int64, limit: Int = streamPageSize) async throws(StoreError) -> [StreamChange] {
        try await database {
            try await reads.withConnection { connection in
                let rows = try await connection.query(
                    """
                    WITH changed AS (
                        SELECT order_id, max(stream_seq) AS seq FROM order_events
                        WHERE tenant_id = \(tenant) AND store_id = \(store) AND stream_seq > \(cursor)
                        GROUP BY order_id ORDER BY seq LIMIT \(limit)
                    )
                    SELECT changed.seq, \(unescaped: OrderRow.columns), projection::text AS projection
                    FROM changed JOIN orders USING (order_id)
                    WHERE orders.tenant_id = \(tenant) AND orders.store_id = \(store)
                    ORDER BY changed.seq
                    """)
                return try rows.map { row in
                    StreamChange(
                        cursor: try row.decode("seq", as: Int64.self), order: try OrderRow.order(from: row),
                        projection: try row.decode("projection", as: PostgresJSON?.self)?.decode(JSONValue.self))
                }
            }
        }
    }

    /// The store's stream position (0 before its first event): where a new subscriber starts.
    public func streamHead(store: String, in scope: TenantScope) async throws(StoreError) -> Int64 {
        try await database {
            try await reads.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT stream_position FROM stores WHERE \(scope.sql) AND store_id = \(store)")
                guard let row = rows.first else { throw StoreError.unknownStore(store) }
                return try row.decode("stream_position", as: Int64.self)
            }
        }
    }

    /// Each store's stream position (`streamHead`), in one round trip for every store: what the stream hub compares its
    /// subscribers' cursors with on each tick, instead of each stream reading its store's changes. One statement per
    /// tenant, pipelined: each names its tenant, so Citus runs it on the tenant's shard. A store that is gone has nothing
    /// to read: 0, as before its first event.
    public func streamHeads(_ stores: [StoreKey]) async throws(StoreError) -> [StoreKey: Int64] {
        guard !stores.isEmpty else { return [:] }
        var byTenant: [String: [String]] = [:]
        for key in stores { byTenant[key.tenant, default: []].append(key.store) }
        let tenants = byTenant.keys.sorted()
        let statements: [PostgresQuery] = tenants.map { tenant in
            """
            SELECT store_id, stream_position FROM stores
            WHERE tenant_id = \(tenant) AND store_id = ANY(\(PostgresTextArray(byTenant[tenant] ?? []))::text[])
            """
        }
        return try await database {
            try await reads.withConnection { connection in
                let answers = try await connection.pipeline(statements)
                var heads = Dictionary(stores.map { ($0, Int64(0)) }, uniquingKeysWith: { first, _ in first })
                for (tenant, rows) in zip(tenants, answers) {
                    for row in rows {
                        heads[StoreKey(tenant: tenant, store: try row.decode("store_id"))] = try row.decode("stream_position")
                    }
                }
                return heads
            }
        }
    }

    /// Which of the generated keys `ids` can no longer be used (revoked, or past their expiry at `now`): their open
    /// streams are closed.
    public func unusableKeys(_ ids: [String], now: Date) async throws(StoreError) -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT key_id FROM api_keys
                    WHERE key_id = ANY(\(PostgresTextArray(ids))::text[]) AND (revoked_at IS NOT NULL OR expires_at <= \(now))
                    """)
                return Set(try rows.map { try $0.decode("key_id", as: String.self) })
            }
        }
    }

    /// Stores a ticket (by its SHA-256) that opens `store`'s stream once within `lifetime` seconds; the stream it opens
    /// counts against `holder`, the key that asked for it (docs/limits.md). The ticket must name `scope`'s tenant, else
    /// the store is unknown to it. Returns the expiry it stored, for the answer to report the same instant.
    @discardableResult
    public func issueStreamTicket(
        _ ticket: StreamTicket, store: String, in scope: TenantScope, holder: String, lifetime: TimeInterval
    ) async throws(StoreError) -> Date {
        let now = clock.now
        let expiresAt = now.addingTimeInterval(lifetime)
        guard ticket.tenant == scope.tenant else { throw .unknownStore(store) }
        try await database {
            try await pool.withConnection { connection in
                guard try await !connection.query("SELECT 1 FROM stores WHERE \(scope.sql) AND store_id = \(store)").isEmpty else {
                    throw StoreError.unknownStore(store)
                }
                _ = try await connection.query("DELETE FROM stream_tickets WHERE expires_at < \(now)")
                _ = try await connection.query(
                    """
                    INSERT INTO stream_tickets (tenant_id, store_id, ticket_hash, expires_at, holder)
                    VALUES (\(scope.tenant), \(store), sha256(convert_to(\(ticket.description), 'UTF8')), \(expiresAt), \(holder))
                    """)
            }
        }
        return expiresAt
    }

    /// Uses up a ticket: the tenant it was issued in when it was issued for `store`, unused and unexpired (it is
    /// deleted either way). The ticket is the credential here, as a key is elsewhere; it names its tenant, so the
    /// lookup is the tenant's alone.
    public func redeemStreamTicket(_ ticket: StreamTicket, store: String) async throws(StoreError) -> RedeemedStreamTicket? {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    DELETE FROM stream_tickets
                    WHERE tenant_id = \(ticket.tenant) AND store_id = \(store) AND ticket_hash = sha256(convert_to(\(ticket.description), 'UTF8'))
                    RETURNING tenant_id, holder, expires_at > \(clock.now) AS valid
                    """)
                guard let row = rows.first, try row.decode("valid", as: Bool.self) else { return nil }
                return RedeemedStreamTicket(tenant: try row.decode("tenant_id"), holder: try row.decode("holder"))
            }
        }
    }
}

/// What a redeemed stream ticket opens: a stream of its tenant, counted against the key that asked for it.
public struct RedeemedStreamTicket: Sendable, Hashable {
    public var tenant: String
    /// The key that asked for the ticket; nil for a ticket issued before streams were counted per key.
    public var holder: String?
}
