import CremaCore
import CremaPostgres

extension CustomerRepository {
    /// The customer's open orders (queued, preparing, ready), newest first, each with its store's place: what the
    /// watch's relevance widget is given. At most `listLimit`, the same cap as the customer's order list (an open order
    /// is closed by the lifecycle sweep after the store's expiry limits, except one being made).
    public func relevantOrders(customerRef: String, tenant: String) async throws(StoreError) -> [RelevantOrder] {
        try await database {
            try await reads.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(unescaped: OrderRow.columns), s.latitude, s.longitude FROM orders
                    LEFT JOIN LATERAL (
                        SELECT latitude, longitude FROM stores WHERE stores.tenant_id = orders.tenant_id AND stores.store_id = orders.store_id
                    ) s ON true
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) AND is_open
                    ORDER BY placed_at DESC, order_id DESC
                    LIMIT \(Self.listLimit)
                    """
                ).map { row in RelevantOrder(order: try OrderRow.order(from: row), location: try StoreRepository.location(from: row)) }
            }
        }
    }
}
