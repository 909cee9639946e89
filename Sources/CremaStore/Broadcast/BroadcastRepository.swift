public import CremaCore
public import CremaPostgres
public import Foundation

/// Stores' broadcast channels, the boards waiting to be broadcast (one row per store, coalescing every change until
/// it is sent), and stores' announcements.
public struct BroadcastRepository: Repository {
    public let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    static let columns: StaticString = """
        tenant_id, store_id, bundle_id, environment, storage, channel_id, created_at, recreated_at, recreations,
        last_broadcast_at, last_status, last_reason, broadcasts
        """

    /// The store's channel, when it has one.
    public func channel(store: String, tenant: String) async throws(StoreError) -> StoreChannelRecord? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM store_channels WHERE tenant_id = \(tenant) AND store_id = \(store)"
                ).first.map(Self.channel(from:))
            }
        }
    }

    /// Keeps a channel just created at APNs; when another request gave the store a channel first, keeps that one and
    /// says so (`inserted` false), so the caller deletes its own at APNs.
    public func insert(_ record: StoreChannelRecord) async throws(StoreError) -> (channel: StoreChannelRecord, inserted: Bool) {
        try await database {
            try await pool.withConnection { connection in
                let inserted = try await connection.query(
                    """
                    INSERT INTO store_channels (tenant_id, store_id, bundle_id, environment, storage, channel_id, created_at)
                    VALUES (\(record.tenantID), \(record.storeID), \(record.bundleID), \(record.environment), \(record.storage),
                            \(record.channelID), \(record.createdAt))
                    ON CONFLICT (tenant_id, store_id) DO NOTHING
                    RETURNING \(unescaped: Self.columns)
                    """)
                if let row = inserted.first { return (try Self.channel(from: row), true) }
                let existing = try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM store_channels WHERE tenant_id = \(record.tenantID) AND store_id = \(record.storeID)")
                guard let row = existing.first else { throw StoreError.unknownStore(record.storeID) }
                return (try Self.channel(from: row), false)
            }
        }
    }

    /// Forgets the store's channel (and its waiting broadcast); returns what was removed.
    public func delete(store: String, tenant: String) async throws(StoreError) -> StoreChannelRecord? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "DELETE FROM store_channels WHERE tenant_id = \(tenant) AND store_id = \(store) RETURNING \(unescaped: Self.columns)"
                ).first.map(Self.channel(from:))
            }
        }
    }

    /// Puts a new channel id in place of one Apple forgot, counting the re-creation; false when the store's channel
    /// is no longer `old` (disabled, or already replaced by another process).
    public func replace(store: String, tenant: String, old: String, new: String, at: Date) async throws(StoreError) -> StoreChannelRecord? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    UPDATE store_channels SET channel_id = \(new), recreated_at = \(at), recreations = recreations + 1
                    WHERE tenant_id = \(tenant) AND store_id = \(store) AND channel_id = \(old)
                    RETURNING \(unescaped: Self.columns)
                    """
                ).first.map(Self.channel(from:))
            }
        }
    }

    /// Every channel Crema keeps for a bundle id and environment, in every tenant (the reconciliation's side of the
    /// comparison: a bundle id registered by two tenants is one app at Apple).
    public func channels(bundleID: String, environment: String) async throws(StoreError) -> [StoreChannelRecord] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(unescaped: Self.columns) FROM store_channels
                    WHERE bundle_id = \(bundleID) AND environment = \(environment)
                    """
                ).map(Self.channel(from:))
            }
        }
    }

    /// The apps and environments that have at least one channel.
    public func channelApps() async throws(StoreError) -> [(tenant: String, bundleID: String, environment: String)] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query("SELECT DISTINCT tenant_id, bundle_id, environment FROM store_channels ORDER BY 1, 2, 3")
                    .map { (try $0.decode("tenant_id"), try $0.decode("bundle_id"), try $0.decode("environment")) }
            }
        }
    }

    /// The statement (a CTE body) that queues the store's board after a change, inside the change's own transaction:
    /// nothing when the store has no channel; one row per store however many changes come before it is sent.
    public static func queueBoard<SQL: PostgresSQL>(tenant: String, store: String, change: BoardChange, at: Date) -> SQL {
        """
        INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at)
        SELECT tenant_id, store_id, \(change.priority), \(at)::timestamptz + make_interval(secs => \(BoardChange.settleSeconds))
        FROM store_channels WHERE tenant_id = \(tenant) AND store_id = \(store)
        ON CONFLICT (tenant_id, store_id) DO UPDATE
            SET changes = broadcast_outbox.changes + 1, priority = greatest(broadcast_outbox.priority, EXCLUDED.priority),
                due_at = least(broadcast_outbox.due_at, EXCLUDED.due_at)
        """
    }

    /// Queues the store's board after a change that is not an order's (an announcement, a new channel).
    public func queueBoard(store: String, tenant: String, change: BoardChange, at: Date) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query(Self.queueBoard(tenant: tenant, store: store, change: change, at: at))
            }
        }
    }

    /// Queues the store's board for `due` (an announcement ending), unless it is queued already (then it goes sooner
    /// and is queued again for the same reason after).
    public func queueBoard(store: String, tenant: String, due: Date) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at)
                    SELECT tenant_id, store_id, \(BoardChange.announcement.priority), \(due)
                    FROM store_channels WHERE tenant_id = \(tenant) AND store_id = \(store)
                    ON CONFLICT (tenant_id, store_id) DO NOTHING
                    """)
            }
        }
    }

    /// What the store's board is projected from, at `now`; nil for an unknown store.
    public func board(store: String, tenant: String, now: Date) async throws(StoreError) -> BoardInputs? {
        try await database {
            try await pool.withConnection { connection in
                let answers = try await connection.pipeline([
                    "SELECT name FROM stores WHERE tenant_id = \(tenant) AND store_id = \(store)",
                    """
                    SELECT number, state, eta, locale, placed_at FROM orders
                    WHERE tenant_id = \(tenant) AND store_id = \(store) AND is_open
                    ORDER BY placed_at, order_id LIMIT \(OrderRepository.boardLimit)
                    """,
                    """
                    SELECT message, until, created_at FROM store_announcements
                    WHERE tenant_id = \(tenant) AND store_id = \(store) AND until > \(now)
                    ORDER BY created_at DESC LIMIT \(StoreAnnouncement.maxActivePerStore)
                    """,
                ])
                guard let storeRow = answers[0].first else { return nil }
                let orders = try answers[1].map { row in
                    BoardOrder(
                        number: try row.decode("number"), state: OrderState(rawValue: try row.decode("state")) ?? .queued,
                        eta: try row.decode("eta"), locale: try row.decode("locale"), placedAt: try row.decode("placed_at"))
                }
                let announcements = try answers[2].map { row in
                    StoreAnnouncement(message: try row.decode("message"), until: try row.decode("until"), createdAt: try row.decode("created_at"))
                }
                return BoardInputs(storeName: try storeRow.decode("name"), orders: orders, announcements: announcements)
            }
        }
    }

    /// The tenants with a board due at `now` (not leased, or its lease ran out), in `tenant_id` order: one probe of
    /// `broadcast_outbox_tenant_due` per tenant. A dispatcher claims for each in turn, so every claim names its tenant
    /// (on Citus, one shard) and one tenant's boards never hold another's back by more than a claim.
    public func tenantsWithDueBoards(now: Date) async throws(StoreError) -> [String] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT t.tenant_id FROM \(unescaped: TenantSurvey.tenants) t
                    WHERE EXISTS (
                        SELECT 1 FROM broadcast_outbox b
                        WHERE b.tenant_id = t.tenant_id AND b.due_at <= \(now) AND (b.leased_until IS NULL OR b.leased_until < \(now)))
                    ORDER BY t.tenant_id
                    """
                ).map { try $0.decode("tenant_id") }
            }
        }
    }

    /// Leases up to `limit` of `tenant`'s boards whose settle time has come, oldest first; a lease that runs out (a
    /// dispatcher that died mid-send) makes the board due again.
    /// `leaseID` names the claim (every board it leases): drawn here, since Citus refuses a volatile function such as
    /// `gen_random_uuid()` in an UPDATE of a distributed table.
    public func claim(for tenant: String, limit: Int, lease: Double, now: Date, leaseID: UUID = UUID()) async throws(StoreError) -> [DueBroadcast] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    WITH due AS (
                        SELECT tenant_id, store_id, priority FROM broadcast_outbox
                        WHERE tenant_id = \(tenant) AND due_at <= \(now) AND (leased_until IS NULL OR leased_until < \(now))
                        ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                    ), leased AS (
                        UPDATE broadcast_outbox b SET leased_until = \(now)::timestamptz + make_interval(secs => \(lease)),
                               lease = \(leaseID), attempts = attempts + 1, priority = 5
                        FROM due WHERE b.tenant_id = \(tenant) AND b.store_id = due.store_id
                        RETURNING b.tenant_id, b.store_id, due.priority, b.changes, b.attempts, b.lease
                    )
                    SELECT leased.priority::int AS priority, leased.changes, leased.attempts, leased.lease, \(unescaped: Self.prefixedColumns)
                    FROM leased JOIN store_channels c ON c.tenant_id = \(tenant) AND c.store_id = leased.store_id
                    """
                ).map { row in
                    DueBroadcast(
                        channel: try Self.channel(from: row), lease: try row.decode("lease"), priority: try row.decode("priority"),
                        changes: try row.decode("changes"), attempts: try row.decode("attempts"))
                }
            }
        }
    }

    /// Records APNs' answer on the channel and removes the board from the outbox, unless changes arrived while it was
    /// in flight: then it is due again one settle later (at the priority those changes earned). Only the claim holding
    /// the row's lease changes the outbox; the channel's record is written only while it is still the channel sent to.
    public func finish(_ due: DueBroadcast, status: Int?, reason: String?, sent: Bool, at: Date) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.pipeline([
                    """
                    UPDATE store_channels SET last_broadcast_at = \(at), last_status = \(status), last_reason = \(reason),
                           broadcasts = broadcasts + \(sent ? 1 : 0)
                    WHERE tenant_id = \(due.channel.tenantID) AND store_id = \(due.channel.storeID) AND channel_id = \(due.channel.channelID)
                    """,
                    """
                    DELETE FROM broadcast_outbox
                    WHERE tenant_id = \(due.channel.tenantID) AND store_id = \(due.channel.storeID) AND lease = \(due.lease)
                      AND changes = \(due.changes)
                    """,
                    """
                    UPDATE broadcast_outbox SET changes = changes - \(due.changes), leased_until = NULL, lease = NULL, attempts = 0,
                           last_error = NULL, due_at = \(at)::timestamptz + make_interval(secs => \(BoardChange.settleSeconds))
                    WHERE tenant_id = \(due.channel.tenantID) AND store_id = \(due.channel.storeID) AND lease = \(due.lease)
                    """,
                ])
            }
        }
    }

    /// Leaves the board in the outbox to be tried again at `retryAt` (at its claimed priority, or higher if changes
    /// meanwhile earned it), if this claim still holds it.
    public func retry(_ due: DueBroadcast, at retryAt: Date, error: String) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    UPDATE broadcast_outbox SET leased_until = NULL, lease = NULL, due_at = \(retryAt), last_error = \(String(error.prefix(500))),
                           priority = greatest(priority, \(due.priority))
                    WHERE tenant_id = \(due.channel.tenantID) AND store_id = \(due.channel.storeID) AND lease = \(due.lease)
                    """)
            }
        }
    }

    /// Keeps a store announcement and queues the board; past `StoreAnnouncement.maxActivePerStore` running ones the
    /// oldest is ended, so a store holds a bounded number however often it announces.
    public func announce(
        store: String, tenant: String, id: UUID, message: String, until: Date, at: Date
    ) async throws(StoreError) -> StoreAnnouncement {
        try await database {
            try await pool.withTransaction { connection in
                guard try await !connection.query("SELECT 1 FROM stores WHERE tenant_id = \(tenant) AND store_id = \(store) FOR UPDATE").isEmpty else {
                    throw StoreError.unknownStore(store)
                }
                _ = try await connection.pipeline([
                    """
                    INSERT INTO store_announcements (tenant_id, store_id, announcement_id, message, until, created_at)
                    VALUES (\(tenant), \(store), \(id), \(message), \(until), \(at))
                    """,
                    """
                    DELETE FROM store_announcements WHERE tenant_id = \(tenant) AND store_id = \(store) AND announcement_id IN (
                        SELECT announcement_id FROM store_announcements WHERE tenant_id = \(tenant) AND store_id = \(store)
                        ORDER BY (until > \(at)) DESC, created_at DESC OFFSET \(StoreAnnouncement.maxActivePerStore))
                    """,
                    Self.queueBoard(tenant: tenant, store: store, change: .announcement, at: at),
                ])
                return StoreAnnouncement(message: message, until: until, createdAt: at)
            }
        }
    }

    static let prefixedColumns: StaticString = """
        c.tenant_id, c.store_id, c.bundle_id, c.environment, c.storage, c.channel_id, c.created_at, c.recreated_at, c.recreations,
        c.last_broadcast_at, c.last_status, c.last_reason, c.broadcasts
        """

    static func channel(from row: PostgresRow) throws -> StoreChannelRecord {
        StoreChannelRecord(
            tenantID: try row.decode("tenant_id"), storeID: try row.decode("store_id"), bundleID: try row.decode("bundle_id"),
            environment: try row.decode("environment"), storage: try row.decode("storage"), channelID: try row.decode("channel_id"),
            createdAt: try row.decode("created_at"), recreatedAt: try row.decode("recreated_at"), recreations: try row.decode("recreations"),
            lastBroadcastAt: try row.decode("last_broadcast_at"), lastStatus: try row.decode("last_status"),
            lastReason: try row.decode("last_reason"), broadcasts: try row.decode("broadcasts"))
    }
}
