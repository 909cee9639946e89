import CremaPostgres

extension TestDatabase {
    /// Until `count` statements of this database wait for a lock. PostgreSQL's lock table is another process's state
    /// with no event to wait on, so it is polled.
    public func untilWaiting(_ count: Int) async throws {
        let waiting: PostgresQuery = """
            SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE NOT l.granted AND a.datname = current_database()
            """
        while try await scalar(waiting, as: Int.self) < count { try await Task.sleep(for: .milliseconds(20)) }
    }
}
