public import CremaAPNsProtocol
public import CremaCore
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

    public init(pool: PostgresPool) { self.pool = pool }

    /// Registers or rotates an order's Live Activity update token: one per order, replaced in place so pushes
    /// already planned go to the new token. A token moved from another order is taken from it.
    /// With `customerRef` (a customer's own token, `/v1/me`) the order must be that customer's (else
    /// `unknownOrder`, as if it did not exist), and only that customer's other orders can lose the token.
    public func putActivityToken(
        orderID: UUID, token: String, environment: APNsEnvironment, customerRef: String? = nil
    ) async throws(StoreError) -> RegisteredToken {
        try await database {
            try await pool.withTransaction { connection in
                let orders = try await connection.query(
                    """
                    SELECT store_id FROM orders
                    WHERE order_id = \(orderID) AND (\(customerRef)::text IS NULL OR customer_ref = \(customerRef)) FOR SHARE
                    """)
                guard let store: String = try orders.first?.decode("store_id") else { throw StoreError.unknownOrder }
                try await connection.query(
                    """
                    UPDATE push_targets SET retired_at = now(), retired_reason = 'reassigned'
                    WHERE store_id = \(store) AND token = \(token) AND order_id <> \(orderID) AND retired_at IS NULL
                      AND (\(customerRef)::text IS NULL
                           OR order_id IN (SELECT order_id FROM orders WHERE store_id = \(store) AND customer_ref = \(customerRef)))
                    """)
                let rows = try await connection.query(
                    """
                    INSERT INTO push_targets (store_id, kind, order_id, token, environment)
                    VALUES (\(store), 'live_activity', \(orderID), \(token), \(environment.rawValue))
                    ON CONFLICT (store_id, order_id) WHERE retired_at IS NULL DO UPDATE
                        SET token = EXCLUDED.token, environment = EXCLUDED.environment, updated_at = now()
                    RETURNING target_id, (xmax = 0) AS created
                    """)
                return RegisteredToken(
                    ref: PushTargetRef(kind: .liveActivity, id: try rows[0].decode("target_id")), environment: environment,
                    created: try rows[0].decode("created"), redactedToken: PushTokenValidation.redacted(token))
            }
        }
    }

    /// Forgets an order's Live Activity token (the activity ended on the device). False when none was set.
    public func deleteActivityToken(orderID: UUID) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withTransaction { connection in
                let orders = try await connection.query("SELECT store_id FROM orders WHERE order_id = \(orderID)")
                guard let store: String = try orders.first?.decode("store_id") else { throw StoreError.unknownOrder }
                let rows = try await connection.query(
                    """
                    UPDATE push_targets SET retired_at = now(), retired_reason = 'unregistered by the app'
                    WHERE store_id = \(store) AND order_id = \(orderID) AND retired_at IS NULL RETURNING 1
                    """)
                return !rows.isEmpty
            }
        }
    }

    /// Registers a customer's alert, widget or push-to-start token; `replaces` retires the token it rotates from.
    /// Registering a token again refreshes it (and its registration time, which a later 410 is compared with).
    public func putCustomerToken(
        customerRef: String, kind: PushTargetKind, token: String, environment: APNsEnvironment, replaces: String?
    ) async throws(StoreError) -> RegisteredToken {
        try await database {
            try await pool.withTransaction { connection in
                if let replaces, replaces != token {
                    try await connection.query(
                        """
                        UPDATE customer_tokens SET retired_at = now(), retired_reason = 'rotated'
                        WHERE customer_ref = \(customerRef) AND kind = \(kind.rawValue) AND token = \(replaces) AND retired_at IS NULL
                        """)
                }
                let rows = try await connection.query(
                    """
                    INSERT INTO customer_tokens (customer_ref, kind, token, environment)
                    VALUES (\(customerRef), \(kind.rawValue), \(token), \(environment.rawValue))
                    ON CONFLICT (customer_ref, kind, token) WHERE retired_at IS NULL DO UPDATE
                        SET environment = EXCLUDED.environment, updated_at = now()
                    RETURNING token_id, (xmax = 0) AS created
                    """)
                return RegisteredToken(
                    ref: PushTargetRef(kind: kind, id: try rows[0].decode("token_id")), environment: environment,
                    created: try rows[0].decode("created"), redactedToken: PushTokenValidation.redacted(token))
            }
        }
    }

    /// Unregisters a customer token. False when it was not registered.
    public func deleteCustomerToken(customerRef: String, kind: PushTargetKind, token: String) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withConnection { connection in
                !(try await connection.query(
                    """
                    UPDATE customer_tokens SET retired_at = now(), retired_reason = 'unregistered by the app'
                    WHERE customer_ref = \(customerRef) AND kind = \(kind.rawValue) AND token = \(token) AND retired_at IS NULL
                    RETURNING 1
                    """)).isEmpty
            }
        }
    }
}
