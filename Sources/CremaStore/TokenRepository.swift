public import CremaAPNsProtocol
public import CremaCore
public import CremaClock
public import CremaPostgres
public import Foundation

/// A token as registered: which row holds it now and whether this call created it.
public struct RegisteredToken: Sendable, Hashable {
    public var ref: PushTargetRef
    public var environment: APNsEnvironment
    public var created: Bool
    /// Only the first characters: answers and logs never carry a whole token.
    public var redactedToken: String
}

/// Device tokens as the app registers them: an order's Live Activity token and a customer's alert, widget and
/// push-to-start tokens.
public struct TokenRepository: Repository {
    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    /// Registers or rotates an order's Live Activity update token: one per order, replaced in place so pushes
    /// already planned go to the new token. A token moved from another order is taken from it.
    /// With `customerRef` (a customer's own token, `/v1/me`) the order must be that customer's (else
    /// `unknownOrder`, as if it did not exist), and only that customer's other orders can lose the token.
    /// `bundleID` names the app the token came from; nil means the tenant's default app (docs/tenants.md).
    /// `frequentUpdates` is the app's word on the customer's setting, stored with each registration (true is Apple's default).
    public func putActivityToken(
        orderID: UUID, in scope: TenantScope, token: String, environment: APNsEnvironment, bundleID: String?,
        customerRef: String? = nil, frequentUpdates: Bool = true
    ) async throws(StoreError) -> RegisteredToken {
        try await database {
            try await pool.withTransaction { connection in
                let orders = try await connection.query(
                    """
                    SELECT store_id FROM orders
                    WHERE \(scope.sql) AND order_id = \(orderID) AND (\(customerRef)::text IS NULL OR customer_ref = \(customerRef)) FOR SHARE
                    """)
                guard let store: String = try orders.first?.decode("store_id") else { throw StoreError.unknownOrder }
                let app = try await Self.app(bundleID, tenant: scope.tenant, on: connection)
                let now = clock.now
                try await connection.query(
                    """
                    UPDATE push_targets SET retired_at = \(clock.now), retired_reason = 'reassigned'
                    WHERE tenant_id = \(scope.tenant) AND store_id = \(store) AND token = \(token) AND order_id <> \(orderID) AND retired_at IS NULL
                      AND (\(customerRef)::text IS NULL
                           OR order_id IN (SELECT order_id FROM orders
                                           WHERE tenant_id = \(scope.tenant) AND store_id = \(store) AND customer_ref = \(customerRef)))
                    """)
                let rows = try await connection.query(
                    """
                    INSERT INTO push_targets (tenant_id, store_id, kind, order_id, token, environment, bundle_id, frequent_updates,
                                              created_at, updated_at)
                    VALUES (\(scope.tenant), \(store), 'live_activity', \(orderID), \(token), \(environment.rawValue), \(app),
                            \(frequentUpdates)::boolean, \(now), \(now))
                    ON CONFLICT (tenant_id, store_id, order_id) WHERE retired_at IS NULL DO UPDATE
                        SET token = EXCLUDED.token, environment = EXCLUDED.environment, bundle_id = EXCLUDED.bundle_id,
                            frequent_updates = EXCLUDED.frequent_updates, updated_at = EXCLUDED.updated_at
                    RETURNING target_id, (xmax = 0) AS created
                    """)
                return RegisteredToken(
                    ref: PushTargetRef(kind: .liveActivity, id: try rows[0].decode("target_id")), environment: environment,
                    created: try rows[0].decode("created"), redactedToken: PushTokenValidation.redacted(token))
            }
        }
    }

    /// Forgets an order's Live Activity token (the activity ended on the device). False when none was set.
    public func deleteActivityToken(orderID: UUID, in scope: TenantScope) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withTransaction { connection in
                let orders = try await connection.query("SELECT store_id FROM orders WHERE \(scope.sql) AND order_id = \(orderID)")
                guard let store: String = try orders.first?.decode("store_id") else { throw StoreError.unknownOrder }
                let rows = try await connection.query(
                    """
                    UPDATE push_targets SET retired_at = \(clock.now), retired_reason = 'unregistered by the app'
                    WHERE tenant_id = \(scope.tenant) AND store_id = \(store) AND order_id = \(orderID) AND retired_at IS NULL RETURNING 1
                    """)
                return !rows.isEmpty
            }
        }
    }

    /// Registers a customer's alert, widget or push-to-start token; `replaces` retires the token it rotates from.
    /// Registering a token again refreshes it (and its registration time, which a later 410 is compared with).
    /// A new token past `limit` active tokens of its kind is refused (`limitReached`): every token is a row the planner
    /// writes for each change of the customer's orders, under the order's lock. Concurrent registrations of one
    /// customer and kind take turns (`TenantTurn`), so two cannot both take the last place.
    public func putCustomerToken(
        customerRef: String, tenant: String, kind: PushTargetKind, token: String, environment: APNsEnvironment, bundleID: String?,
        replaces: String?, limit: Int
    ) async throws(StoreError) -> RegisteredToken {
        // A customer at the limit is refused in one statement, without a transaction or a lock: a flood of refused
        // registrations costs one read each. Below the limit the count is taken again under the lock.
        if replaces == nil, try await activeTokens(customerRef: customerRef, tenant: tenant, kind: kind, besides: token) >= limit {
            throw .limitReached(.tokensPerCustomer, limit: limit)
        }
        return try await database {
            try await pool.withTransaction { connection in
                let app = try await Self.app(bundleID, tenant: tenant, on: connection)
                let now = clock.now
                if let replaces, replaces != token {
                    try await connection.query(
                        """
                        UPDATE customer_tokens SET retired_at = \(clock.now), retired_reason = 'rotated'
                        WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) AND kind = \(kind.rawValue) AND token = \(replaces) AND retired_at IS NULL
                        """)
                }
                // One round trip: the count is a statement of its own, so its snapshot comes after the turn is taken.
                let turn = TenantTurn.customerTokens(tenant: tenant, customerRef: customerRef, kind: kind)
                let held = try await connection.pipeline([
                    turn.take,
                    """
                    SELECT count(*) FILTER (WHERE token <> \(token)) AS others, coalesce(bool_or(token = \(token)), false) AS present
                    FROM customer_tokens
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) AND kind = \(kind.rawValue) AND retired_at IS NULL
                    """,
                ])
                let others: Int = try held[1][0].decode("others")
                if try !held[1][0].decode("present", as: Bool.self), others >= limit {
                    throw StoreError.limitReached(.tokensPerCustomer, limit: limit)
                }
                let rows = try await connection.pipeline([
                    """
                    INSERT INTO customer_tokens (tenant_id, customer_ref, kind, token, environment, bundle_id, created_at, updated_at)
                    VALUES (\(tenant), \(customerRef), \(kind.rawValue), \(token), \(environment.rawValue), \(app), \(now), \(now))
                    ON CONFLICT (tenant_id, customer_ref, kind, token) WHERE retired_at IS NULL DO UPDATE
                        SET environment = EXCLUDED.environment, bundle_id = EXCLUDED.bundle_id, updated_at = EXCLUDED.updated_at
                    RETURNING token_id, (xmax = 0) AS created
                    """,
                    turn.end,
                ])[0]
                return RegisteredToken(
                    ref: PushTargetRef(kind: kind, id: try rows[0].decode("token_id")), environment: environment,
                    created: try rows[0].decode("created"), redactedToken: PushTokenValidation.redacted(token))
            }
        }
    }

    /// The customer's active tokens of `kind` other than `token`; the limit does not count when `token` is held already.
    private func activeTokens(customerRef: String, tenant: String, kind: PushTargetKind, besides token: String) async throws(StoreError) -> Int {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT CASE WHEN bool_or(token = \(token)) THEN 0 ELSE count(*) END AS others
                    FROM customer_tokens
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) AND kind = \(kind.rawValue) AND retired_at IS NULL
                    """)
                return try rows[0].decode("others", as: Int.self)
            }
        }
    }

    /// Unregisters a customer token. False when it was not registered.
    public func deleteCustomerToken(customerRef: String, tenant: String, kind: PushTargetKind, token: String) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withConnection { connection in
                !(try await connection.query(
                    """
                    UPDATE customer_tokens SET retired_at = \(clock.now), retired_reason = 'unregistered by the app'
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) AND kind = \(kind.rawValue) AND token = \(token)
                      AND retired_at IS NULL
                    RETURNING 1
                    """)).isEmpty
            }
        }
    }

    /// The app a token registers under: the one named (which must be the tenant's), else the tenant's default app.
    /// Nil only for the default tenant with no app in the database: its single app is `CREMA_APNS_TOPIC`.
    static func app(_ bundleID: String?, tenant: String, on connection: PostgresConnection) async throws -> String? {
        let rows = try await connection.query(
            """
            SELECT (SELECT default_bundle_id FROM tenants WHERE tenant_id = \(tenant)) AS fallback,
                   EXISTS (SELECT 1 FROM apps WHERE tenant_id = \(tenant) AND bundle_id = \(bundleID)) AS named
            """)
        if let bundleID {
            guard try rows[0].decode("named", as: Bool.self) else { throw StoreError.unknownApp(bundleID) }
            return bundleID
        }
        // The default tenant's default app is the configured one (nil here, resolved when planning).
        if tenant == TenantScope.defaultTenantName { return nil }
        guard let fallback = try rows[0].decode("fallback", as: String?.self) else { throw StoreError.appRequired }
        return fallback
    }
}
