public import CremaAPNsProtocol
public import CremaClock
public import CremaCore
public import CremaPostgres
public import Foundation

/// One receipt a phone posted, already opened: the delivery it names (the tag checked by the service), how the app saw
/// it, and when.
public struct PostedReceipt: Sendable, Hashable {
    public var deliveryID: Int64
    public var orderID: UUID
    public var surface: ReceiptSurface
    public var at: Date

    public init(deliveryID: Int64, orderID: UUID, surface: ReceiptSurface, at: Date) {
        self.deliveryID = deliveryID
        self.orderID = orderID
        self.surface = surface
        self.at = at
    }
}

/// A receipt written for the first time: for the metrics, which count each delivery once.
public struct RecordedReceipt: Sendable, Hashable {
    public var pushType: APNsPushType
    public var surface: ReceiptSurface
    /// From APNs' acceptance to the receipt; nil when the dispatcher had not yet recorded the acceptance.
    public var secondsAfterAcceptance: Double?

    public init(pushType: APNsPushType, surface: ReceiptSurface, secondsAfterAcceptance: Double?) {
        self.pushType = pushType
        self.surface = surface
        self.secondsAfterAcceptance = secondsAfterAcceptance
    }
}

/// The receipts of deliveries (`delivery_receipts`, migration 020): what phones posted and what Crema infers from what
/// the app did next. Every statement names the tenant and reaches a delivery through its order (the order's index),
/// the customer's own where a customer is the caller, so a receipt for another customer's delivery finds nothing.
public struct ReceiptRepository: Repository {
    public let pool: PostgresPool
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    /// What a recording found: how many receipts named a delivery of the caller (repeats included), and those written now.
    public struct Recording: Sendable, Hashable {
        public var known: Int
        public var recorded: [RecordedReceipt]
    }

    private struct Claim: Encodable {
        var delivery_id: Int64
        var order_id: UUID
        var surface: String
        var at: Double
    }

    /// Keeps the first receipt of each of the customer's deliveries named in `receipts`; a receipt naming another's (or
    /// none) is not counted and writes nothing. `at` is bounded to the delivery's lifetime: not before it was planned,
    /// not after it expired (APNs gives up then), not after now.
    public func record(_ receipts: [PostedReceipt], customerRef: String, tenant: String) async throws(StoreError) -> Recording {
        guard !receipts.isEmpty else { return Recording(known: 0, recorded: []) }
        let now = clock.now
        let claims = receipts.map {
            Claim(delivery_id: $0.deliveryID, order_id: $0.orderID, surface: $0.surface.rawValue, at: $0.at.timeIntervalSince1970)
        }
        // The caller's deliveries among the receipts, each with its received time bounded to its lifetime: read once for
        // the answer (what was known, when APNs had accepted each) and once more by the insert that keeps the first of each.
        func known(_ claimed: PostgresJSON) -> PostgresQuery {
            """
            SELECT d.tenant_id, d.store_id, d.order_id, d.delivery_id, d.push_type, d.la_event, r.surface, d.sent_at,
                   least(greatest(to_timestamp(r.at), d.created_at), coalesce(d.expires_at, \(now)), \(now)::timestamptz) AS received_at
            FROM jsonb_to_recordset(\(claimed)::jsonb) AS r(delivery_id bigint, order_id uuid, surface text, at float8)
            JOIN orders o ON o.tenant_id = \(tenant) AND o.order_id = r.order_id AND o.customer_ref = \(customerRef)
            JOIN delivery_outbox d ON d.tenant_id = o.tenant_id AND d.store_id = o.store_id AND d.order_id = o.order_id
                 AND d.delivery_id = r.delivery_id AND d.push_type IS NOT NULL
            """
        }
        return try await database {
            let claimed = try PostgresJSON(encoding: claims)
            return try await pool.withConnection { connection in
                let answers = try await connection.pipeline([
                    known(claimed),
                    """
                    INSERT INTO delivery_receipts
                        (tenant_id, store_id, order_id, delivery_id, push_type, la_event, surface, received_at, recorded_at)
                    SELECT DISTINCT ON (delivery_id) tenant_id, store_id, order_id, delivery_id, push_type, la_event, surface, received_at,
                           \(now)::timestamptz
                    FROM (\(known(claimed))) k
                    ORDER BY delivery_id, received_at
                    ON CONFLICT DO NOTHING
                    RETURNING delivery_id, push_type, surface, received_at
                    """,
                ])
                return Recording(known: answers[0].count, recorded: try Self.recorded(answers[1], sentAt: try Self.sentAt(answers[0])))
            }
        }
    }

    /// A push-to-start's inferred receipt: the order's activity registered its update token at `at`, so the starts of
    /// this order that APNs accepted before then became an activity (`activity_token`); only the first registration counts.
    public func inferStarts(tenant: String, orderID: UUID, at: Date) async throws(StoreError) -> [RecordedReceipt] {
        try await infer(
            surface: .activityToken, at: at,
            matching: """
                SELECT d.tenant_id, d.store_id, d.order_id, d.delivery_id, d.push_type, d.la_event, d.sent_at
                FROM orders o
                JOIN delivery_outbox d ON d.tenant_id = o.tenant_id AND d.store_id = o.store_id AND d.order_id = o.order_id
                WHERE o.tenant_id = \(tenant) AND o.order_id = \(orderID) AND o.personal_data_removed_at IS NULL
                  AND d.push_type = 'liveactivity' AND d.la_event = 'start' AND d.sent_at <= \(at)
                """)
    }

    /// A widget push's inferred receipt: the customer's widget asked for its data at `at`, after APNs accepted the push
    /// and before it expired (`widget_fetch`); only the first fetch counts. Looks back one day, through each widget
    /// token's recent pushes (the planner's history index).
    public func inferWidgets(tenant: String, customerRef: String, at: Date) async throws(StoreError) -> [RecordedReceipt] {
        try await infer(
            surface: .widgetFetch, at: at,
            matching: """
                SELECT d.tenant_id, d.store_id, d.order_id, d.delivery_id, d.push_type, d.la_event, d.sent_at
                FROM customer_tokens c
                JOIN delivery_outbox d ON d.tenant_id = c.tenant_id AND d.target_kind = c.kind AND d.target_id = c.token_id
                WHERE c.tenant_id = \(tenant) AND c.customer_ref = \(customerRef) AND c.kind = 'widget'
                  AND d.created_at > \(at.addingTimeInterval(-24 * 3600)) AND d.push_type = 'widgets'
                  AND d.sent_at <= \(at) AND coalesce(d.expires_at >= \(at), true)
                """)
    }

    /// Writes `surface` receipts received at `at` for the deliveries `matching` selects (its columns: tenant_id, store_id,
    /// order_id, delivery_id, push_type, la_event, sent_at), keeping the first receipt of each.
    private func infer(surface: ReceiptSurface, at: Date, matching: PostgresQuery) async throws(StoreError) -> [RecordedReceipt] {
        let now = clock.now
        return try await database {
            try await pool.withConnection { connection in
                let answers = try await connection.pipeline([
                    matching,
                    """
                    INSERT INTO delivery_receipts
                        (tenant_id, store_id, order_id, delivery_id, push_type, la_event, surface, received_at, recorded_at)
                    SELECT tenant_id, store_id, order_id, delivery_id, push_type, la_event, \(surface.rawValue), \(at)::timestamptz,
                           \(now)::timestamptz
                    FROM (\(matching)) m
                    ON CONFLICT DO NOTHING
                    RETURNING delivery_id, push_type, surface, received_at
                    """,
                ])
                return try Self.recorded(answers[1], sentAt: try Self.sentAt(answers[0]))
            }
        }
    }

    /// The funnel of `store` (in `scope`) over the pushes planned since `since`; unknownStore when the scope has no such store.
    public func funnel(store: String, since: Date, in scope: TenantScope) async throws(StoreError) -> PushFunnel {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    WITH d AS (
                        SELECT d.push_type, d.la_event, d.attempts, d.state, d.sent_at, r.surface,
                               greatest(extract(epoch FROM r.received_at - d.sent_at), 0)::float8 AS seconds
                        FROM delivery_outbox d
                        LEFT JOIN delivery_receipts r
                               ON r.tenant_id = d.tenant_id AND r.store_id = d.store_id AND r.order_id = d.order_id
                              AND r.delivery_id = d.delivery_id
                        WHERE d.tenant_id = \(scope.tenant) AND d.store_id = \(store) AND d.created_at >= \(since)
                          AND d.push_type IS NOT NULL AND NOT (d.state = 'skipped' AND d.attempts = 0)
                    )
                    SELECT (SELECT count(*) FROM stores WHERE \(scope.sql) AND store_id = \(store))::int8 AS found,
                           d.push_type, d.la_event, count(d.push_type)::int8 AS planned,
                           count(*) FILTER (WHERE d.attempts > 0 AND d.state <> 'skipped')::int8 AS sent,
                           count(d.sent_at)::int8 AS accepted,
                           count(*) FILTER (WHERE d.surface = 'notification')::int8 AS notification,
                           count(*) FILTER (WHERE d.surface = 'activity')::int8 AS activity,
                           count(*) FILTER (WHERE d.surface = 'app')::int8 AS app,
                           count(*) FILTER (WHERE d.surface = 'activity_token')::int8 AS activity_token,
                           count(*) FILTER (WHERE d.surface = 'widget_fetch')::int8 AS widget_fetch,
                           percentile_cont(0.5) WITHIN GROUP (ORDER BY d.seconds) AS p50,
                           percentile_cont(0.99) WITHIN GROUP (ORDER BY d.seconds) AS p99
                    FROM (SELECT 1) one LEFT JOIN d ON true
                    GROUP BY d.push_type, d.la_event
                    ORDER BY d.push_type, d.la_event NULLS FIRST
                    """)
                guard let first = rows.first, try first.decode("found", as: Int.self) > 0 else { throw StoreError.unknownStore(store) }
                let steps = try rows.compactMap { row -> PushFunnel.Step? in
                    guard let type = try row.decode("push_type", as: String?.self), let pushType = APNsPushType(rawValue: type) else {
                        return nil
                    }
                    var received: [ReceiptSurface: Int] = [:]
                    for surface in ReceiptSurface.allCases { received[surface] = try row.decode(surface.rawValue, as: Int.self) }
                    return PushFunnel.Step(
                        pushType: pushType, liveActivityEvent: try row.decode("la_event", as: String?.self).flatMap(LiveActivityEvent.init),
                        planned: try row.decode("planned"), sent: try row.decode("sent"), accepted: try row.decode("accepted"),
                        received: received, receiptSecondsP50: try row.decode("p50", as: Double?.self),
                        receiptSecondsP99: try row.decode("p99", as: Double?.self))
                }
                return PushFunnel(since: since, steps: steps)
            }
        }
    }

    // Each receipt statement is a read and an insert that reads the same rows again, pipelined, rather than one statement
    // whose insert returns to a select: under Citus the parts of one statement that read each other's rows are copied
    // to every worker, so a customer's receipt reached every worker group (docs/scaling.md, "On a running cluster").

    /// When APNs accepted each delivery a read found (nil: not yet recorded), by delivery id.
    static func sentAt(_ rows: [PostgresRow]) throws -> [Int64: Date] {
        var sent: [Int64: Date] = [:]
        for row in rows {
            if let at = try row.decode("sent_at", as: Date?.self) { sent[try row.decode("delivery_id")] = at }
        }
        return sent
    }

    /// The receipts an insert wrote (its RETURNING rows), with the seconds from APNs' acceptance to each.
    static func recorded(_ rows: [PostgresRow], sentAt: [Int64: Date]) throws -> [RecordedReceipt] {
        try rows.compactMap { row in
            guard let type = try row.decode("push_type", as: String?.self), let pushType = APNsPushType(rawValue: type),
                let surface = try row.decode("surface", as: String?.self).flatMap(ReceiptSurface.init)
            else { return nil }
            let received = try row.decode("received_at", as: Date.self)
            return RecordedReceipt(
                pushType: pushType, surface: surface,
                secondsAfterAcceptance: sentAt[try row.decode("delivery_id")].map { received.timeIntervalSince($0) })
        }
    }
}
