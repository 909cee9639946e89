import CremaPostgres

extension TestDatabase {
    /// The statements of this database waiting for a lock now. On Citus a statement on a distributed table waits on the
    /// worker that holds its shard, not on the coordinator the test is connected to, so the count is taken on every node
    /// (the database has the same name on each) and summed.
    public func waitingForLocks() async throws -> Int {
        let local = """
            SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE NOT l.granted AND a.datname = current_database()
            """
        guard citus != nil else { return try await scalar(PostgresQuery(unsafeSQL: local), as: Int.self) }
        // A node that cannot answer fails the cast with its error as the text, rather than counting as none waiting.
        return try await scalar("SELECT coalesce(sum(result::int), 0) FROM run_command_on_all_nodes(\(local))", as: Int.self)
    }

    /// Until `count` statements of this database wait for a lock. PostgreSQL's lock table is another process's state
    /// with no event to wait on, so it is polled.
    public func untilWaiting(_ count: Int) async throws {
        while try await waitingForLocks() < count { try await Task.sleep(for: .milliseconds(20)) }
    }
}
