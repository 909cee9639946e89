/// Transaction isolation levels, as PostgreSQL spells them in `BEGIN ISOLATION LEVEL`.
public enum PostgresIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"
}
