public import CremaCore
public import CremaPostgres
public import Foundation

/// A tenant's own limits (docs/limits.md), as an administrator set them. The operator's defaults are not stored: a
/// tenant without a row, or a NULL column, follows whatever the environment says today.
public struct TenantLimitsRepository: Repository {
    public let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    /// The tenant's own values; nil when it has set none.
    public func overrides(tenant: String) async throws(StoreError) -> TenantLimitOverrides? {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT tokens_per_customer, streams_per_key, webhooks, events_per_order, rate, share
                    FROM tenant_limits WHERE tenant_id = \(tenant)
                    """)
                guard let row = rows.first else { return nil }
                return TenantLimitOverrides(
                    tokensPerCustomer: try row.decode("tokens_per_customer"), streamsPerKey: try row.decode("streams_per_key"),
                    webhooks: try row.decode("webhooks"), eventsPerOrder: try row.decode("events_per_order"),
                    rate: try row.decode("rate", as: String?.self).flatMap(RateSetting.init(parsing:)), share: try row.decode("share"))
            }
        }
    }

    /// Replaces the tenant's own values with `overrides` (a nil field goes back to the operator's default).
    public func put(_ overrides: TenantLimitOverrides, tenant: String, at: Date) async throws(StoreError) {
        try await database {
            _ = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO tenant_limits (tenant_id, tokens_per_customer, streams_per_key, webhooks, events_per_order, rate, share, updated_at)
                    VALUES (\(tenant), \(overrides.tokensPerCustomer), \(overrides.streamsPerKey), \(overrides.webhooks),
                            \(overrides.eventsPerOrder), \(overrides.rate?.description), \(overrides.share), \(at))
                    ON CONFLICT (tenant_id) DO UPDATE SET
                        tokens_per_customer = EXCLUDED.tokens_per_customer, streams_per_key = EXCLUDED.streams_per_key,
                        webhooks = EXCLUDED.webhooks, events_per_order = EXCLUDED.events_per_order, rate = EXCLUDED.rate,
                        share = EXCLUDED.share, updated_at = EXCLUDED.updated_at
                    """)
            }
        }
    }
}
