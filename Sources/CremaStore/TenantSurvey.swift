/// The tenants a survey for due work walks (the dispatchers' and the broadcaster's, when they may have missed an
/// announcement): each one probed with an `EXISTS` on its rows, so a tenant's backlog costs its survey one index probe.
enum TenantSurvey {
    /// Every tenant with a store, as a subquery of one column `tenant_id`. Not the table `tenants`: under Citus that is a
    /// reference table, and Citus refused a reference table correlated with a distributed one ("correlated subqueries
    /// are not supported when the FROM clause contains a reference table", scripts/citus-test). `stores` is
    /// distributed by `tenant_id` like the tables probed, so each shard probes its own tenants. An outbox row belongs to
    /// an order, a board to a store, so to a tenant with a store.
    static let tenants: StaticString = "(SELECT DISTINCT tenant_id FROM stores)"

    /// Every tenant with a webhook endpoint, as `tenants` is for stores: a webhook delivery is to one of its tenant's
    /// endpoints (its foreign key), whether or not the tenant has a store yet.
    static let tenantsWithEndpoints: StaticString = "(SELECT DISTINCT tenant_id FROM webhook_endpoints)"
}
