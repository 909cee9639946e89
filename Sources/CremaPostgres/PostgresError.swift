/// A failure talking to PostgreSQL. `description` holds only the code, SQLSTATE and constraint name, so it is safe to log;
/// the server's own message (which may quote data) is in `debugDescription`. A connection that could not be opened
/// also says where it was going and why (`connect`), which quotes no data and never the password.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Stable, machine-readable kinds of failure.
    public enum Code: String, Sendable, Hashable {
        /// Could not connect, or the connection broke: the database is unreachable for now.
        case connectionFailed = "connection_failed"
        /// The server refused the statement; see `sqlState`.
        case server = "server_error"
        /// No pooled connection became free within the acquire timeout.
        case acquireTimeout = "acquire_timeout"
        /// A value could not be decoded into the requested Swift type.
        case decoding = "decoding_failed"
        /// The statement was canceled (task cancellation or `statement_timeout`).
        case canceled = "canceled"
        /// The pool or connection was closed.
        case closed = "closed"
        /// A value cannot be sent (it contains NUL, which PostgreSQL text cannot hold).
        case invalidParameter = "invalid_parameter"
    }

    public var code: Code
    /// The five-character SQLSTATE when the server reported one (`23505`, `40001`, ...).
    public var sqlState: String?
    /// Detail for debugging only: may contain server text that quotes values.
    public var detail: String
    /// The constraint the statement broke (`23505`, `23503`, `23514`...): a name from the schema, never a value, so it is
    /// logged with the SQLSTATE where the server's message may not be.
    public var constraint: String?
    /// Set when opening a connection failed: host, port, database, user and libpq's reason, so a wrong
    /// `CREMA_DATABASE_URL` is one readable line rather than a bare code.
    public var connect: PostgresConnectFailure?

    public init(_ code: Code, sqlState: String? = nil, detail: String = "", connect: PostgresConnectFailure? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.detail = detail
        self.connect = connect
    }

    /// True when retrying later on a fresh connection may succeed (the database is down or restarting).
    public var isUnavailable: Bool {
        switch code {
        // A canceled statement is a statement_timeout, a cancel that outlived its statement, or a caller
        // that went away: in each case trying again later is the right advice.
        case .connectionFailed, .acquireTimeout, .canceled: return true
        case .server:
            // Class 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now; 25006: a
            // read-only server, which after a failover is the old primary (the pool reconnects that connection).
            guard let sqlState else { return false }
            if sqlState == SQLState.internalError, Self.citusWorkerConnectionFailures.contains(where: detail.contains) { return true }
            return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", SQLState.readOnlyTransaction].contains(sqlState)
        case .decoding, .closed, .invalidParameter: return false
        }
    }

    /// What a Citus coordinator says when its connection to a worker broke under the transaction (the worker died, or
    /// its group is failing over): the coordinator itself is fine and the worker comes back, but Citus gives these no
    /// SQLSTATE of their own (XX000), so they are known by their message. Each was answered 500 in
    /// drills/citus-failover-drill.sh until it was listed here:
    /// - a worker the transaction had used is gone (`remote_transaction.c`); the dispatcher also dropped outcomes it
    ///   could not record, so their pushes waited out their lease;
    /// - a worker died during the commit itself (`placement_connection.c`): whether it committed is not known, and a
    ///   client's retry with its Idempotency-Key finds out (Citus raises the same words for a deferred constraint that
    ///   fails at commit, and Crema declares none);
    /// - libpq's and the worker's own words for a connection cut mid-statement, relayed without their SQLSTATE
    ///   (`ReportResultError` in `remote_commands.c` falls back to XX000).
    static let citusWorkerConnectionFailures = [
        "failure on connection marked as essential",
        "could not commit transaction for shard",
        "server closed the connection unexpectedly",
        "terminating connection due to unexpected postmaster exit",
    ]

    public var description: String {
        "PostgresError(\(code.rawValue)\(sqlState.map { ", sqlstate \($0)" } ?? "")\(constraint.map { ", constraint \($0)" } ?? ""))"
            + "\(connect.map { ": \($0)" } ?? "")"
    }

    /// A connect failure's detail is its reason, which `description` already gives.
    public var debugDescription: String { connect == nil ? "\(description): \(detail)" : description }
}

extension PostgresError {
    /// SQLSTATEs the store layer maps to domain errors.
    public enum SQLState {
        public static let uniqueViolation = "23505"
        /// CREATE TABLE of a table that exists (without IF NOT EXISTS, or racing another that creates it).
        public static let duplicateTable = "42P07"
        /// A write sent to a read-only server (`default_transaction_read_only`, or a standby).
        public static let readOnlyTransaction = "25006"
        public static let foreignKeyViolation = "23503"
        public static let serializationFailure = "40001"
        public static let deadlockDetected = "40P01"
        public static let queryCanceled = "57014"
        /// An error raised without a code of its own (`elog(ERROR)`, Citus's remote-connection failures).
        public static let internalError = "XX000"
    }
}
