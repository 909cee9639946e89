import CremaCore
import CremaPostgres

/// A registration's turn within its tenant (migration 019, `tenant_turns`): registrations that count before they insert
/// (a customer's tokens of one kind, a tenant's webhook endpoints) must take turns, or two could both take the last
/// place. The turn is a row of the tenant, on the node that holds the tenant's rows, rather than an advisory lock,
/// which holds only on the node a client happens to be connected to (docs/scaling.md). A transaction runs `take`
/// before it counts and `end` before it commits: a second transaction's `take` of the same turn waits on the first
/// one's row until that transaction ends, then finds the row gone and goes on, counting after the first one's insert.
/// Turns of other customers, kinds or tenants are other rows and never wait on each other.
struct TenantTurn: Sendable, Hashable {
    let tenant: String
    let turn: String

    /// The turn of one customer's tokens of one kind: what the per-customer token limit counts.
    static func customerTokens(tenant: String, customerRef: String, kind: PushTargetKind) -> TenantTurn {
        TenantTurn(tenant: tenant, turn: "tokens/\(kind.rawValue)/\(customerRef)")
    }

    /// The turn of a tenant's webhook endpoints: what the per-tenant endpoint limit counts.
    static func webhookEndpoints(tenant: String) -> TenantTurn {
        TenantTurn(tenant: tenant, turn: "webhooks")
    }

    /// Takes the turn, waiting for a transaction that holds it to end.
    var take: PostgresQuery { "INSERT INTO tenant_turns (tenant_id, turn) VALUES (\(tenant), \(turn))" }

    /// Gives the row back within the transaction, so the table is empty between transactions; the turn itself is held
    /// until the transaction ends (a waiter waits on the transaction, not on the row's deletion).
    var end: PostgresQuery { "DELETE FROM tenant_turns WHERE tenant_id = \(tenant) AND turn = \(turn)" }
}
