public import CremaPostgres

/// Reads that may be served by a standby (`CREMA_DATABASE_READ_URL`), never older than what the primary had committed
/// when the read began: the read first takes the primary's WAL position (one short statement there), and the standby
/// serves it once it has replayed that far, waiting up to `replayWait` for it (under writes a healthy standby is a few
/// milliseconds behind); otherwise, or when the standby cannot answer, the primary does.
/// So a read after any acknowledged write (this process's or another's) sees that write. Without a standby every
/// read is the primary's, at no extra cost.
public struct StandbyReads: Sendable {
    /// Where one read was served, and why: what the `crema_db_standby_reads_total` series counts.
    public enum Outcome: String, Sendable, CaseIterable {
        /// The standby had replayed the primary's position.
        case standby
        /// The standby had not yet replayed the primary's position, so the primary served the read.
        case primaryStandbyBehind = "primary_standby_behind"
        /// The standby could not be reached, or canceled the read (a conflict with its replay): the primary served it.
        case primaryStandbyFailed = "primary_standby_failed"
    }

    public let primary: PostgresPool
    public let standby: PostgresPool?
    /// How long a read waits, on the standby, for it to replay the primary's position before the primary serves it.
    public let replayWait: Duration
    let observe: @Sendable (Outcome) -> Void

    /// Long enough for a standby that keeps up under writes (replay a few milliseconds behind), short next to a read's
    /// own time on the primary when it does not.
    public static let defaultReplayWait = Duration.milliseconds(20)

    /// Every read on `primary`.
    public init(primary: PostgresPool) {
        self.init(primary: primary, standby: nil)
    }

    /// Reads on `standby` when it is fresh enough; `observe` hears where each read went.
    public init(
        primary: PostgresPool, standby: PostgresPool?, replayWait: Duration = defaultReplayWait,
        observe: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) {
        self.primary = primary
        self.standby = standby
        self.replayWait = replayWait
        self.observe = observe
    }

    /// Runs `body` on a connection of the standby, if it has replayed what the primary had committed when this
    /// call began, else on one of the primary. `body` may run twice (the standby failed mid-read): it must only read.
    public func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> sending T) async throws -> sending T {
        guard let standby else { return try await primary.withConnection(body) }
        let position = try await primaryPosition()
        do {
            let value = try await standby.withConnection { connection in
                guard try await hasReplayed(position, on: connection) else { throw Behind() }
                return try await body(connection)
            }
            observe(.standby)
            return value
        } catch let failure {
            observe(try Self.fallback(for: failure))
            return try await primary.withConnection(body)
        }
    }

    /// `withConnection` in a read-only transaction at `isolation` (a snapshot taken after the freshness check).
    public func withTransaction<T: Sendable>(
        isolation: PostgresIsolation, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        guard let standby else { return try await primary.withTransaction(isolation: isolation, body) }
        let position = try await primaryPosition()
        do {
            let value = try await standby.withTransaction(isolation: isolation) { connection in
                guard try await hasReplayed(position, on: connection) else { throw Behind() }
                return try await body(connection)
            }
            observe(.standby)
            return value
        } catch let failure {
            observe(try Self.fallback(for: failure))
            return try await primary.withTransaction(isolation: isolation, body)
        }
    }

    /// The primary's current WAL write position: at or past the end of every commit it has acknowledged.
    private func primaryPosition() async throws -> String {
        try await primary.withConnection { connection in
            try await connection.query("SELECT pg_current_wal_lsn()::text AS lsn").first?.decode("lsn", as: String.self) ?? "0/0"
        }
    }

    /// Waits up to `replayWait` for the standby to replay `position`, inside the server, and says whether it did; one
    /// round trip. A server not in recovery is a primary (`prefer-standby` found no standby): it has everything.
    private func hasReplayed(_ position: String, on connection: PostgresConnection) async throws -> Bool {
        let waitMilliseconds = replayWait.components.seconds * 1000 + replayWait.components.attoseconds / 1_000_000_000_000_000
        let answers = try await connection.pipeline([
            "SELECT set_config('crema.replay_position', \(position), false), set_config('crema.replay_wait_ms', \(String(waitMilliseconds)), false)",
            Self.waitForReplay,
            "SELECT NOT pg_is_in_recovery() OR coalesce(pg_last_wal_replay_lsn() >= \(position)::pg_lsn, false) AS fresh",
        ])
        return try answers[2].first?.decode("fresh", as: Bool.self) ?? false
    }

    /// The wait, a constant statement (the position and the bound come from the session's settings, so no value enters
    /// the text), polling every half millisecond: PostgreSQL 15 has no call that waits for a replay position.
    private static let waitForReplay: PostgresQuery = """
        DO $$DECLARE
            target pg_lsn := current_setting('crema.replay_position')::pg_lsn;
            deadline timestamptz := clock_timestamp() + current_setting('crema.replay_wait_ms')::int * interval '1 millisecond';
        BEGIN
            WHILE pg_is_in_recovery() AND coalesce(pg_last_wal_replay_lsn() < target, true) AND clock_timestamp() < deadline LOOP
                PERFORM pg_sleep(0.0005);
            END LOOP;
        END$$
        """

    /// Whether the primary should serve a read the standby did not; anything else (the read's own error) is rethrown.
    private static func fallback(for failure: any Error) throws -> Outcome {
        if failure is Behind { return .primaryStandbyBehind }
        // 40001 on a standby: canceled because of a conflict with recovery (the rows it read were being replayed away).
        if let error = failure as? PostgresError, error.isUnavailable || error.sqlState == "40001" { return .primaryStandbyFailed }
        throw failure
    }

    /// The standby has not replayed the primary's position yet.
    private struct Behind: Error {}
}
