extension PostgresConnection {
    /// Runs `body` inside `BEGIN ISOLATION LEVEL …` / `COMMIT` on this connection, rolling back when it throws: the
    /// pool's `withTransaction`, and a caller that must run statements on the connection before its transaction
    /// begins (a standby read checks its replay position first, so the snapshot is taken after it).
    public func inTransaction<T: Sendable>(
        isolation: PostgresIsolation, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        // BEGIN travels with the body's first statements, and a body may commit with its last ones
        // (`pipeline([..., "COMMIT"])`): a transaction costs no round trip of its own.
        begin(isolation)
        let value: T
        do {
            value = try await body(self)
        } catch {
            // A broken connection has no transaction left to roll back; the lease repairs it.
            if isInTransaction { try? await rollback() }
            throw error
        }
        if isInTransaction { try await commit() }
        return value
    }
}
