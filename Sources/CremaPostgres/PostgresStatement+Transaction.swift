extension PostgresStatement {
    /// `COMMIT`, sent with a command's last statements.
    public static let commit = PostgresStatement(sql: "COMMIT")
    /// `ROLLBACK`.
    public static let rollback = PostgresStatement(sql: "ROLLBACK")

    private static let beginReadCommitted = PostgresStatement(sql: "BEGIN ISOLATION LEVEL \(PostgresIsolation.readCommitted.rawValue)")
    private static let beginRepeatableRead = PostgresStatement(sql: "BEGIN ISOLATION LEVEL \(PostgresIsolation.repeatableRead.rawValue)")
    private static let beginSerializable = PostgresStatement(sql: "BEGIN ISOLATION LEVEL \(PostgresIsolation.serializable.rawValue)")

    /// `BEGIN ISOLATION LEVEL …`, sent ahead of a transaction's first statements.
    static func begin(_ isolation: PostgresIsolation) -> PostgresStatement {
        switch isolation {
        case .readCommitted: beginReadCommitted
        case .repeatableRead: beginRepeatableRead
        case .serializable: beginSerializable
        }
    }
}
