import Foundation

extension PostgresConnection {
    /// Opens a transaction with the next flight: `BEGIN` travels with the transaction's first statements.
    public func begin(_ isolation: PostgresIsolation) {
        lock.withLock { machine.begin(isolation) }
    }

    /// Whether a transaction is open (or about to be, with the next flight): what ``commit()`` or ``rollback()`` end.
    public var isInTransaction: Bool { lock.withLock { machine.isInTransaction(transactionStatus()) } }

    /// Commits the open transaction; a `BEGIN` not yet sent is dropped instead (nothing ran, nothing to commit).
    public func commit() async throws(PostgresError) {
        try await end(lock.withLock { machine.commit(transactionStatus()) })
    }

    /// Rolls the open transaction back; a `BEGIN` not yet sent is dropped.
    public func rollback() async throws(PostgresError) {
        try await end(lock.withLock { machine.rollback() })
    }

    private func end(_ action: Machine.TransactionEnd) async throws(PostgresError) {
        switch action {
        case .none: return
        case .commit: try await query(PostgresStatement.commit.query)
        case .rollback: try await query(PostgresStatement.rollback.query)
        case .rollbackFailed:
            try await query(PostgresStatement.rollback.query)
            throw PostgresError(.server, sqlState: "25P02", detail: "the transaction had failed and was rolled back, not committed")
        }
    }

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
