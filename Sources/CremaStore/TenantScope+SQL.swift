import CremaCore
import CremaPostgres

extension TenantScope {
    /// `tenant_id = … AND store_id IN (the scope's stores)` over unqualified columns: the filter every read and
    /// write of tenant-owned rows carries, so rows outside the scope are never found.
    var sql: PostgresQuery { filter(on: "") }

    /// The same filter over columns qualified by `alias` (`"o."`, say).
    func filter<SQL: PostgresSQL>(on alias: StaticString) -> SQL {
        let stores = sortedStores.map(PostgresTextArray.init)
        return "\(unescaped: alias)tenant_id = \(tenant) AND (\(stores)::text[] IS NULL OR \(unescaped: alias)store_id = ANY(\(stores)::text[]))"
    }
}
