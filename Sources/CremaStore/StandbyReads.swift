public import CremaPostgres
import Synchronization

/// Reads that may be served by a standby (`CREMA_DATABASE_READ_URL`), never older than what the primary had committed
/// when the read began: the read first takes the primary's WAL insert position and timeline (one short statement
/// there), and the standby serves it once it has replayed that far on that timeline, waiting up to `replayWait` for it
/// (under writes a standby that keeps up is a few milliseconds behind); otherwise, or when the standby cannot answer, the
/// primary does, and
/// `StandbyBackoff` sends the next reads straight there. So a read after any acknowledged write (this process's or
/// another's) sees that write. Without a standby every read is the primary's, at no extra cost.
public struct StandbyReads: Sendable {
    /// Where one read was served, and why: what the `crema_db_standby_reads_total` series counts.
    public enum Outcome: String, Sendable, CaseIterable {
        /// The standby had replayed the primary's position.
        case standby
        /// The standby had not replayed the primary's position within `replayWait`.
        case primaryStandbyBehind = "primary_standby_behind"
        /// The standby could not be reached, had no connection free, or canceled the read (a conflict with its replay).
        case primaryStandbyFailed = "primary_standby_failed"
        /// The server the read URL reached is not in recovery (a promoted or former primary): its data may have
        /// diverged, so it serves nothing.
        case primaryNotStandby = "primary_not_standby"
        /// The standby receives no WAL of the primary's current timeline (it follows a former primary, or no primary at
        /// all): a position reached on another timeline is not the primary's history, so it serves nothing.
        case primaryStandbyOtherTimeline = "primary_standby_other_timeline"
        /// Sent straight to the primary after the standby missed (`StandbyBackoff`).
        case primaryBackoff = "primary_backoff"
    }

    public let primary: PostgresPool
    public let standby: PostgresPool?
    /// How long a read waits, on the standby, for it to replay the primary's position before the primary serves it.
    public let replayWait: Duration
    let observe: @Sendable (Outcome) -> Void
    /// Told when a read begins to wait for the standby's replay (it had not replayed the position at once).
    let observeWait: @Sendable () -> Void
    private let backoff = Backoff()
    private let position = PrimaryPosition<Position>()

    /// Long enough for a standby that keeps up under writes (replay a few milliseconds behind), short next to a read's
    /// own time on the primary when it does not.
    public static let defaultReplayWait = Duration.milliseconds(20)

    /// Every read on `primary`.
    public init(primary: PostgresPool) {
        self.init(primary: primary, standby: nil)
    }

    /// Reads on `standby` when it is fresh enough; `observe` hears where each read went. The standby pool's acquire
    /// timeout should be short (`crema serve`: 100 ms): a read waiting for a standby connection could have been served.
    public init(
        primary: PostgresPool, standby: PostgresPool?, replayWait: Duration = defaultReplayWait,
        observeWait: @escaping @Sendable () -> Void = {}, observe: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) {
        self.primary = primary
        self.standby = standby
        self.replayWait = replayWait
        self.observeWait = observeWait
        self.observe = observe
    }

    /// Runs `body` on a connection of the standby, if it has replayed what the primary had committed when this
    /// call began, else on one of the primary. `body` may run twice (the standby failed mid-read): it must only read.
    public func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> sending T) async throws -> sending T {
        try await route(body)
    }

    /// `withConnection` in a transaction at `isolation`; on the standby it begins after the replay check, so its
    /// snapshot holds everything the check waited for.
    public func withTransaction<T: Sendable>(
        isolation: PostgresIsolation, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        // A hot standby refuses SERIALIZABLE (0A000): such a transaction is the primary's.
        guard isolation != .serializable else { return try await primary.withTransaction(isolation: isolation, body) }
        return try await route { connection in try await connection.inTransaction(isolation: isolation, body) }
    }

    /// `read` on the standby once it has replayed the primary's position, else on the primary.
    private func route<T: Sendable>(_ read: (PostgresConnection) async throws -> sending T) async throws -> sending T {
        guard let standby, backoff.tryStandby() else {
            if standby != nil { observe(.primaryBackoff) }
            return try await primary.withConnection(read)
        }
        let position = try await primaryPosition()
        do {
            let value = try await standby.withConnection { connection in
                try await replayed(position, on: connection)
                return try await read(connection)
            }
            served(.standby)
            return value
        } catch let failure {
            served(try Self.fallback(for: failure))
            return try await primary.withConnection(read)
        }
    }

    private func served(_ outcome: Outcome) {
        backoff.note(outcome)
        observe(outcome)
    }

    /// Where the primary writes: its WAL insert position and the timeline it writes it on.
    struct Position: Sendable, Equatable {
        var lsn: String
        var timeline: Int
    }

    /// The primary's WAL insert position, taken after this call began (shared with the reads that began with it):
    /// past the end of every commit it has acknowledged, whatever `synchronous_commit` says (an asynchronous commit is
    /// acknowledged before its WAL is written).
    private func primaryPosition() async throws -> Position {
        let primary = primary
        return try await position.current {
            try await primary.withConnection { connection in
                guard let row = try await connection.query(Self.position).first else { throw PostgresError(.decoding, detail: "no WAL position") }
                return Position(lsn: try row.decode("lsn", as: String.self), timeline: try row.decode("timeline", as: Int.self))
            }
        }
    }

    /// The insert position, less the page header it points past when it is at the start of a page (24 bytes) or of a
    /// segment (40): a standby's replay ends before that header, and would otherwise never reach the position of an idle
    /// primary whose last record ended a page (or whose segment was switched). The timeline is the one the primary inserts
    /// on now, the first eight hex digits of its WAL file's name (`pg_control_checkpoint()` would lag a promotion until
    /// the next checkpoint).
    private static let position: PostgresQuery = """
        SELECT (CASE
            WHEN (l - '0/0'::pg_lsn) % (SELECT setting::numeric FROM pg_settings WHERE name = 'wal_segment_size') = 40 THEN l - 40
            WHEN (l - '0/0'::pg_lsn) % current_setting('wal_block_size')::numeric = 24 THEN l - 24
            ELSE l END)::text AS lsn,
            ('x' || substr(pg_walfile_name(l), 1, 8))::bit(32)::int AS timeline
        FROM pg_current_wal_insert_lsn() AS l
        """

    /// Returns when the standby has replayed `position`, waiting up to `replayWait` for it inside the server; throws
    /// when it did not, when the server is not a standby at all, or when the WAL it receives is not of the primary's
    /// timeline. A standby that has replayed it costs one short statement; only one behind pays for the wait, in a second
    /// round trip.
    ///
    /// The timeline is the WAL receiver's (`received_tli`): a standby still following a former primary receives that
    /// one's timeline, and its replay may have gone past the new primary's position on WAL the new primary never had; a
    /// standby that receives nothing (no WAL receiver connected) cannot tell, and serves nothing either. A standby that
    /// receives the new timeline has replayed nothing past the fork (PostgreSQL refuses to follow a timeline that forked
    /// before its replay). `received_tli` is shown only to members of `pg_read_all_stats` (and superusers): without it
    /// every read is the primary's, counted as `primary_standby_other_timeline`.
    private func replayed(_ position: Position, on connection: PostgresConnection) async throws {
        let check: PostgresQuery = """
            SELECT pg_is_in_recovery() AS recovery,
                   coalesce((SELECT received_tli FROM pg_stat_wal_receiver) = \(position.timeline), false) AS timeline,
                   coalesce(pg_last_wal_replay_lsn() >= \(position.lsn)::pg_lsn, false) AS replayed
            """
        let first: Bool
        do {
            first = try Self.replayed(try await connection.query(check))
        } catch Miss.notStandby {
            // The next lease reconnects it, so target_session_attrs can find a standby again.
            connection.reconnectAtNextLease()
            throw Miss.notStandby
        }
        if first { return }
        observeWait()
        let waitMilliseconds = replayWait.components.seconds * 1000 + replayWait.components.attoseconds / 1_000_000_000_000_000
        let answers = try await connection.pipeline([
            "SELECT set_config('crema.replay_position', \(position.lsn), false), set_config('crema.replay_wait_ms', \(String(waitMilliseconds)), false)",
            Self.waitForReplay,
            check,
        ])
        guard try Self.replayed(answers[2]) else { throw Miss.behind }
    }

    /// Whether the check's answer says replayed; a server not in recovery, or on another timeline, is refused.
    private static func replayed(_ rows: [PostgresRow]) throws -> Bool {
        guard let row = rows.first, try row.decode("recovery", as: Bool.self) else { throw Miss.notStandby }
        guard try row.decode("timeline", as: Bool.self) else { throw Miss.otherTimeline }
        return try row.decode("replayed", as: Bool.self)
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

    /// Why the primary serves a read the standby did not; anything else (the read's own error, its cancellation, a
    /// statement timeout) is rethrown, not run again.
    private static func fallback(for failure: any Error) throws -> Outcome {
        switch failure {
        case Miss.behind: return .primaryStandbyBehind
        case Miss.notStandby: return .primaryNotStandby
        case Miss.otherTimeline: return .primaryStandbyOtherTimeline
        default: break
        }
        guard !Task.isCancelled, let error = failure as? PostgresError else { throw failure }
        switch error.code {
        case .connectionFailed, .acquireTimeout: return .primaryStandbyFailed
        case .server:
            // Class 08: the connection broke; 57P01-57P04: the standby is shutting down or restarting; 40001 and 40P01
            // on a standby: canceled by a conflict with recovery.
            guard let state = error.sqlState else { throw failure }
            // Class 53: the standby is out of resources (connections, memory, disk).
            if state.hasPrefix("08") || state.hasPrefix("53") || ["57P01", "57P02", "57P03", "57P04", "40001", "40P01"].contains(state) {
                return .primaryStandbyFailed
            }
            throw failure
        case .canceled, .decoding, .closed, .invalidParameter: throw failure
        }
    }

    /// The standby could not serve the read as fresh.
    private enum Miss: Error { case behind, notStandby, otherTimeline }

    /// The backoff, shared by every copy of this value.
    private final class Backoff: Sendable {
        private let state = Mutex(StandbyBackoff())
        func tryStandby() -> Bool { state.withLock { $0.tryStandby() } }
        func note(_ outcome: Outcome) { state.withLock { outcome == .standby ? $0.served() : $0.missed() } }
    }
}
