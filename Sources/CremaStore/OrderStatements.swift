import CremaCore
import CremaPostgres
import Foundation

/// The statements of an order command (``OrderTransaction``), each written once as a ``PostgresStatementShape``: its
/// text is built the first time its shape is seen and kept, and every later command builds only its values. The
/// text is what the `PostgresQuery` of the same SQL would be, byte for byte (`bench/ingest.sh` replays it).
enum OrderStatements {
    /// The outbox rows and webhook events one write holds: what its text depends on. Bounded per table (a shape
    /// past it is sent as text); the default limits give a few dozen at most.
    struct Rows: Hashable, Sendable {
        var deliveries: Int
        var skips: Int
        var hookEvents: Int
        var hookDeliveries: Int

        init(_ plan: DeliveryPlan, hooks: WebhookOutbox.OrderFanOut) {
            let first = DeliveryPlanning.firstRows(plan)
            self.deliveries = first.deliveries
            self.skips = first.skips
            self.hookEvents = hooks.events.count
            self.hookDeliveries = hooks.deliveries.count
        }
    }

    /// How many shapes of each write are kept.
    static let writeShapes = 64

    /// Where a claimed key's store comes from: named by the request (placing), or the order's.
    enum StoreSource: Sendable {
        case store(String)
        case order(UUID)

        var kind: Kind {
            switch self {
            case .store: .store
            case .order: .order
            }
        }

        enum Kind: Hashable, Sendable {
            case store
            case order
        }
    }

    /// Claims the key in the store `source` names; no row comes back when the key was seen within the window. A
    /// concurrent request with the same key waits on the key's row until the first one commits.
    struct Claim: PostgresStatementShape {
        static let statements = PostgresStatementTable<StoreSource.Kind>(limit: 2)
        var scope: TenantScope
        var request: IdempotentRequest
        var source: StoreSource
        /// The command's time (OrderService's clock): when the key is claimed, and what its window is measured from.
        var now: Date

        var key: StoreSource.Kind { source.kind }

        func sql<SQL: PostgresSQL>() -> SQL {
            """
            INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body, created_at)
            \(row() as SQL)
            ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
                SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
                    response_status = 0, response_body = '', created_at = EXCLUDED.created_at
                WHERE idempotency_keys.created_at < \(now.addingTimeInterval(-IdempotencyRepository.window))
            RETURNING 1
            """
        }

        /// The key's row: VALUES when the request names the store; else read from the order, its `tenant_id` column
        /// and all. Either way Citus runs the statement on the tenant's shard (a one-row subquery of parameters was
        /// pulled to the coordinator first, and its untyped parameters were refused there).
        private func row<SQL: PostgresSQL>() -> SQL {
            switch source {
            case .store(let store):
                return """
                    VALUES (\(scope.tenant), \(store), \(request.scope), \(request.key), \(request.path), \(request.body), 0, '', \(now)::timestamptz)
                    """
            case .order(let id):
                return """
                    SELECT k.tenant_id, k.store_id, \(request.scope)::text, \(request.key)::text, \(request.path)::text, \(request.body)::text, 0, '', \(now)::timestamptz
                    FROM orders k WHERE \(scope.filter(on: "k.") as SQL) AND k.order_id = \(id)
                    """
            }
        }
    }

    /// Takes the store's next order number and stream position, with the planning inputs. The store's row stays locked
    /// until the command commits or rolls back (migration 023).
    struct PlacementRead: PostgresStatementShape {
        static let statements = PostgresStatementTable<PostgresFixedText>(limit: 1)
        var scope: TenantScope
        var store: String
        var customerRef: String?
        var defaultBundleID: String?
        var now: Date

        func sql<SQL: PostgresSQL>() -> SQL {
            """
            WITH s AS (
                UPDATE stores SET next_order_number = next_order_number + 1, stream_position = stream_position + 1
                WHERE \(scope.filter(on: "") as SQL) AND store_id = \(store)
                RETURNING tenant_id, store_id, next_order_number - 1 AS number, name, timezone, stream_position
            ), o AS (
                SELECT s.tenant_id, s.store_id, NULL::uuid AS order_id, \(customerRef)::text AS customer_ref FROM s
            ), t AS (\(DeliveryPlanning.targets(tenant: scope.tenant, defaultBundleID: defaultBundleID) as SQL))
            SELECT s.number, s.name, s.timezone, s.stream_position, \(WebhookOutbox.endpointsColumn(tenant: scope.tenant, store: "s.store_id") as SQL),
                   \(DeliveryPlanning.selectColumns(tenant: scope.tenant, now: now) as SQL)
            FROM s
            """
        }
    }

    /// The order's store's name and time zone, beside a row of `tenant`'s `orders`: what the planner needs of the
    /// store, read the same way by the command's read and the preview's.
    static func storeColumns<SQL: PostgresSQL>(tenant: String) -> SQL {
        """
        (SELECT name FROM stores s WHERE s.tenant_id = \(tenant) AND s.store_id = orders.store_id) AS store_name,
        (SELECT timezone FROM stores s WHERE s.tenant_id = \(tenant) AND s.store_id = orders.store_id) AS store_timezone
        """
    }

    /// Locks the order and reads it with its store, its tenant's event limit, targets and their recent decisions, and
    /// takes the store's next stream position: the store's row is locked after the order's (as every command locks
    /// them), until the command commits or rolls back.
    struct OrderRead: PostgresStatementShape {
        static let statements = PostgresStatementTable<PostgresFixedText>(limit: 1)
        var scope: TenantScope
        var id: UUID
        var defaultBundleID: String?
        var now: Date

        func sql<SQL: PostgresSQL>() -> SQL {
            """
            WITH o AS (
                SELECT tenant_id, \(unescaped: OrderRow.columns), \(OrderStatements.storeColumns(tenant: scope.tenant) as SQL),
                       (SELECT events_per_order FROM tenant_limits l WHERE l.tenant_id = \(scope.tenant)) AS events_per_order
                FROM orders WHERE \(scope.filter(on: "") as SQL) AND order_id = \(id) FOR UPDATE
            ), position AS (
                UPDATE stores SET stream_position = stream_position + 1
                WHERE tenant_id = \(scope.tenant) AND store_id = (SELECT store_id FROM o)
                RETURNING stream_position
            ), t AS (\(DeliveryPlanning.targets(tenant: scope.tenant, defaultBundleID: defaultBundleID) as SQL))
            SELECT o.*, (SELECT stream_position FROM position) AS stream_position,
                   \(WebhookOutbox.endpointsColumn(tenant: scope.tenant, store: "o.store_id") as SQL),
                   \(DeliveryPlanning.selectColumns(tenant: scope.tenant, now: now) as SQL)
            FROM o
            """
        }
    }

    /// Reads the order with its store, targets and the decisions its last event found, without a lock: what
    /// `GET /v1/orders/{id}/preview` plans the last change again with (`OrderRepository.lastChange`).
    struct LastChangeRead: PostgresStatementShape {
        static let statements = PostgresStatementTable<PostgresFixedText>(limit: 1)
        var scope: TenantScope
        var id: UUID
        var defaultBundleID: String?
        var now: Date

        func sql<SQL: PostgresSQL>() -> SQL {
            """
            WITH o AS (
                SELECT tenant_id, \(unescaped: OrderRow.columns), \(OrderStatements.storeColumns(tenant: scope.tenant) as SQL)
                FROM orders WHERE \(scope.filter(on: "") as SQL) AND order_id = \(id)
            ), t AS (\(DeliveryPlanning.targets(tenant: scope.tenant, defaultBundleID: defaultBundleID) as SQL))
            SELECT o.*, \(DeliveryPlanning.selectColumns(tenant: scope.tenant, now: now, beforeLastChange: true) as SQL)
            FROM o
            """
        }
    }

    /// The answer stored with a key seen before, and whether it was stored for the same request.
    struct StoredAnswer: PostgresStatementShape {
        static let statements = PostgresStatementTable<PostgresFixedText>(limit: 1)
        var scope: TenantScope
        var request: IdempotentRequest
        var store: String

        func sql<SQL: PostgresSQL>() -> SQL {
            """
            SELECT request_path = \(request.path) AND request_body = \(request.body) AS same,
                   response_status, response_body
            FROM idempotency_keys WHERE tenant_id = \(scope.tenant) AND store_id = \(store) AND scope = \(request.scope) AND idempotency_key = \(request.key)
            """
        }
    }

    /// What every write stores besides the order and its event: the answer, the board, the deliveries and webhooks.
    struct Effects: Sendable {
        var tenant: String
        var request: IdempotentRequest
        var answer: CommandResponse
        var plan: DeliveryPlan
        var targets: [PushTarget]
        /// The webhook events and deliveries the write stores.
        var hooks: WebhookOutbox.OrderFanOut
        var event: OrderEventType
        var at: Date

        /// The CTEs `answer` … `hook_deliveries` after the order's own, and the select list that ends the statement.
        func sql<SQL: PostgresSQL>(order: Order) -> SQL {
            """
            answer AS (
                \(storeAnswer(store: order.storeID) as SQL)
            ), board AS (
                \(BroadcastRepository.queueBoard(tenant: tenant, store: order.storeID, change: BoardChange(event: event), at: at) as SQL)
            ), \(DeliveryPlanning.ctes(plan, order: order, tenant: tenant, targets: targets, event: event, at: at) as SQL)
            \(WebhookOutbox.orderCTEs(hooks, tenant: tenant, store: order.storeID, orderID: order.id, customerRef: order.customerRef, at: at) as SQL)
            SELECT 1
            """
        }

        private func storeAnswer<SQL: PostgresSQL>(store: String) -> SQL {
            """
            UPDATE idempotency_keys SET response_status = \(answer.status), response_body = \(answer.body)
            WHERE tenant_id = \(tenant) AND store_id = \(store) AND scope = \(request.scope) AND idempotency_key = \(request.key)
            """
        }
    }

    /// Writes a new order with its `placed` event, projection, stored answer and planned deliveries.
    struct Placed: PostgresStatementShape {
        static let statements = PostgresStatementTable<Rows>(limit: writeShapes)
        var order: Order
        var items: PostgresJSON
        var data: PostgresJSON
        var projection: PostgresJSON
        var role: Role
        /// The store's stream position the command took when it opened (and holds until it commits).
        var streamPosition: Int64
        var effects: Effects

        var key: Rows { Rows(effects.plan, hooks: effects.hooks) }

        func sql<SQL: PostgresSQL>() -> SQL {
            let at = effects.at
            return """
                WITH inserted AS (
                    INSERT INTO orders (tenant_id, store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items,
                                        state, version, eta, placed_at, updated_at, projection)
                    VALUES (\(effects.tenant), \(order.storeID), \(order.id), \(order.number), \(order.posRef), \(order.customerRef),
                            \(order.displayName), \(order.locale), \(items)::jsonb,
                            \(order.state.rawValue), \(order.version), \(order.eta), \(at), \(at), \(projection)::jsonb)
                ), event AS (
                    -- Beside the order, not from its RETURNING: Citus copies a CTE's rows that another part reads to every
                    -- worker. The event's foreign key is checked at the statement's end, when the order is there.
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at, stream_seq)
                    VALUES (\(effects.tenant), \(order.storeID), \(order.id), 1, 'placed', \(data)::jsonb,
                            \(role.rawValue), \(effects.request.key), \(at), \(streamPosition))
                ), \(effects.sql(order: order) as SQL)
                """
        }
    }

    /// Appends an event and updates the order, its projection, the stored answer and planned deliveries.
    struct Appended: PostgresStatementShape {
        static let statements = PostgresStatementTable<Rows>(limit: writeShapes)
        var next: Order
        var data: PostgresJSON
        var projection: PostgresJSON
        var role: Role
        /// The store's stream position the command took when it opened (and holds until it commits).
        var streamPosition: Int64
        var effects: Effects

        var key: Rows { Rows(effects.plan, hooks: effects.hooks) }

        func sql<SQL: PostgresSQL>() -> SQL {
            let at = effects.at
            return """
                WITH event AS (
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at, stream_seq)
                    VALUES (\(effects.tenant), \(next.storeID), \(next.id), \(next.version), \(effects.event.rawValue),
                            \(data)::jsonb, \(role.rawValue), \(effects.request.key), \(at), \(streamPosition))
                ), updated AS (
                    UPDATE orders SET state = \(next.state.rawValue), version = \(next.version), eta = \(next.eta),
                           barista = \(next.barista), pickup_point = \(next.pickupPoint), delay_reason = \(next.delayReason),
                           cancel_reason = \(next.cancelReason), updated_at = \(at), projection = \(projection)::jsonb,
                           -- An event after an erasure may bring new text (a cancel reason): retention looks at the order again.
                           personal_data_removed_at = NULL
                    WHERE tenant_id = \(effects.tenant) AND store_id = \(next.storeID) AND order_id = \(next.id)
                ), \(effects.sql(order: next) as SQL)
                """
        }
    }
}
