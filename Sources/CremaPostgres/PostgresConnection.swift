import CLibPQ
import Foundation
public import Logging

/// One libpq connection. Every blocking libpq call runs on the connection's own serial dispatch queue,
/// never on Swift's cooperative thread pool; callers `await` the result. Task cancellation sends a
/// cancel request to the server (`PQcancel`, which libpq allows from any thread).
public final class PostgresConnection: @unchecked Sendable {
    // `handle` is only touched on `queue`; `cancelHandle` is thread-safe by libpq's contract
    // and replaced only on `queue` under `cancelLock`.
    private let queue: DispatchQueue
    private var handle: OpaquePointer?
    /// False after a reconnect whose session set-up failed: the next lease reconnects again.
    private var sessionConfigured = true
    private var cancelHandle: OpaquePointer?
    private let cancelLock = NSLock()
    private let logger: Logger

    private init(handle: OpaquePointer, queue: DispatchQueue, logger: Logger) {
        self.handle = handle
        self.queue = queue
        self.logger = logger
        self.cancelHandle = PQgetCancel(handle)
    }

    deinit {
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        if let handle { PQfinish(handle) }
    }

    /// Opens a connection from a libpq conninfo string or URI; an empty string uses the `PG*` variables.
    public static func connect(_ conninfo: String, logger: Logger = Logger(label: "crema.postgres")) async throws(PostgresError) -> PostgresConnection {
        let queue = DispatchQueue(label: "crema.postgres.connection")
        let result: Result<OpaquePointer, PostgresError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: openHandle(conninfo)) }
        }
        return PostgresConnection(handle: try result.get(), queue: queue, logger: logger)
    }

    /// Runs a statement with bound parameters and returns its rows (empty for commands).
    @discardableResult
    public func query(_ query: PostgresQuery) async throws(PostgresError) -> [PostgresRow] {
        try await run { handle throws(PostgresError) in try Self.execute(query, on: handle) }
    }

    /// Runs one or more statements without parameters (migrations, `BEGIN`). Never pass values here.
    public func simpleQuery(_ sql: String) async throws(PostgresError) {
        try await run { handle throws(PostgresError) in try Self.executeSimple(sql, on: handle) }
    }

    /// Checks the connection without a round trip: reads whatever the server sent (such as a shutdown
    /// notice) and reports whether the connection is still usable.
    public func isUsable() async -> Bool {
        let result: Result<Bool, PostgresError> = await onQueue { [self] handle in
            guard let handle else { return .success(false) }
            // A terminated backend sends a FATAL message and then closes: keep reading while the socket is
            // readable, so the end-of-file behind the message is seen too (it marks the connection bad).
            var reads = 0
            while reads < 4, PQstatus(handle) == CONNECTION_OK, Self.isReadable(PQsocket(handle)) {
                if PQconsumeInput(handle) == 0 { break }
                reads += 1
            }
            return .success(
                sessionConfigured && PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE)
        }
        return (try? result.get()) ?? false
    }

    /// Re-establishes a broken connection with the same parameters (`PQreset`).
    public func reconnect() async throws(PostgresError) {
        try await onQueue { [self] handle -> Result<Void, PostgresError> in
            guard let handle else { return .failure(PostgresError(.closed)) }
            sessionConfigured = false
            PQreset(handle)
            cancelLock.withLock {
                if let cancelHandle { PQfreeCancel(cancelHandle) }
                cancelHandle = PQgetCancel(handle)
            }
            guard PQstatus(handle) == CONNECTION_OK else {
                return .failure(PostgresError(.connectionFailed, detail: Self.message(handle)))
            }
            if let failure = Self.configureSession(handle) { return .failure(failure) }
            sessionConfigured = true
            return .success(())
        }.get()
    }

    /// Closes the connection; later calls fail with `closed`.
    public func close() async {
        _ = await onQueue { [self] handle -> Result<Void, PostgresError> in
            if let handle { PQfinish(handle) }
            self.handle = nil
            return .success(())
        }
    }

    // MARK: - Running work on the connection's queue

    private func run<T: Sendable>(_ body: @escaping @Sendable (OpaquePointer) throws(PostgresError) -> T) async throws(PostgresError) -> T {
        let result = await withTaskCancellationHandler {
            await onQueue { handle -> Result<T, PostgresError> in
                guard let handle else { return .failure(PostgresError(.closed)) }
                do throws(PostgresError) { return .success(try body(handle)) } catch { return .failure(error) }
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable (OpaquePointer?) -> Result<T, PostgresError>) async -> Result<T, PostgresError> {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body(self.handle)) }
        }
    }

    /// Asks the server to cancel whatever this connection is running. `PQcancel` opens a connection of its
    /// own, so it runs on a background queue, never on the (cooperative) thread that cancelled the task.
    private func cancel() {
        DispatchQueue.global().async { [self] in
            cancelLock.withLock {
                guard let cancelHandle else { return }
                var buffer = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
            }
        }
    }

    // MARK: - libpq calls (run on the queue only)

    /// Opens a libpq connection (blocking: call it off the cooperative pool) with Crema's connection
    /// defaults. Keywords before `dbname` are defaults that the conninfo's own values override. The connect
    /// timeout default yields to PGCONNECT_TIMEOUT; keepalives notice a peer that vanished. The result may
    /// be NULL (out of memory) or a handle whose `PQstatus` is bad; the caller frees it.
    static func connectHandle(_ conninfo: String, applicationName: String = "crema") -> OpaquePointer? {
        var keywords = ["fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"]
        var values = [applicationName, "1", "30", "10", "3"]
        if getenv("PGCONNECT_TIMEOUT") == nil {
            keywords.append("connect_timeout")
            values.append("5")
        }
        keywords.append("dbname")
        values.append(conninfo)
        return withCStrings(keywords) { k in withCStrings(values) { v in PQconnectdbParams(k, v, 1) } }
    }

    private static func openHandle(_ conninfo: String) -> Result<OpaquePointer, PostgresError> {
        let handle = connectHandle(conninfo)
        guard let handle else { return .failure(PostgresError(.connectionFailed, detail: "out of memory")) }
        guard PQstatus(handle) == CONNECTION_OK else {
            let detail = message(handle)
            PQfinish(handle)
            return .failure(PostgresError(.connectionFailed, detail: detail))
        }
        if let failure = configureSession(handle) {
            PQfinish(handle)
            return .failure(failure)
        }
        return .success(handle)
    }

    /// No statement runs longer, and no lock is waited for longer, than this: a stuck query frees its slot.
    /// Migrations lift the statement limit for their own transaction.
    static let statementTimeoutSeconds = 30
    static let lockTimeoutSeconds = 10

    /// Fixes the session settings that text decoding relies on, and the time limits above.
    private static func configureSession(_ handle: OpaquePointer) -> PostgresError? {
        do throws(PostgresError) {
            try executeSimple(
                "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; SET extra_float_digits TO 3; SET client_min_messages TO warning; "
                    + "SET statement_timeout TO '\(statementTimeoutSeconds)s'; SET lock_timeout TO '\(lockTimeoutSeconds)s'; "
                    + "SET idle_in_transaction_session_timeout TO '60s'",
                on: handle)
            return nil
        } catch {
            return error
        }
    }

    private static func execute(_ query: PostgresQuery, on handle: OpaquePointer) throws(PostgresError) -> [PostgresRow] {
        let binds = query.binds
        if query.sql.utf8.contains(0) || binds.contains(where: { $0?.utf8.contains(0) == true }) {
            throw PostgresError(.invalidParameter, detail: "a statement or value contains a NUL character")
        }
        let result: OpaquePointer? = withOptionalCStrings(binds) { values in
            PQexecParams(handle, query.sql, Int32(binds.count), nil, values, nil, nil, 0)
        }
        return try rows(from: result, on: handle)
    }

    private static func executeSimple(_ sql: String, on handle: OpaquePointer) throws(PostgresError) {
        // PQexec returns only the last result of a multi-statement string; an earlier failure aborts it.
        _ = try rows(from: PQexec(handle, sql), on: handle)
    }

    private static func rows(from result: OpaquePointer?, on handle: OpaquePointer) throws(PostgresError) -> [PostgresRow] {
        guard let result else { throw PostgresError(.connectionFailed, detail: message(handle)) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return []
        case PGRES_TUPLES_OK:
            let rowCount = PQntuples(result)
            let columnCount = PQnfields(result)
            let columns = PostgresColumns(names: (0..<columnCount).map { String(cString: PQfname(result, $0)) })
            var rows: [PostgresRow] = []
            rows.reserveCapacity(Int(rowCount))
            for r in 0..<rowCount {
                var values: [String?] = []
                values.reserveCapacity(Int(columnCount))
                for c in 0..<columnCount {
                    values.append(PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c)))
                }
                rows.append(PostgresRow(columns: columns, values: values))
            }
            return rows
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let detail = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
            if PQstatus(handle) != CONNECTION_OK {
                throw PostgresError(.connectionFailed, sqlState: sqlState, detail: detail)
            }
            if sqlState == PostgresError.SQLState.queryCanceled {
                throw PostgresError(.canceled, sqlState: sqlState, detail: detail)
            }
            throw PostgresError(.server, sqlState: sqlState, detail: detail)
        }
    }

    /// Whether the socket has data (or end-of-file) waiting, without blocking.
    private static func isReadable(_ socket: Int32) -> Bool {
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    static func message(_ handle: OpaquePointer) -> String {
        PQerrorMessage(handle).map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }
}

/// Calls `body` with a NULL-terminated-free array of C strings that live for the call.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    withOptionalCStrings(strings.map(Optional.some), { body($0 + [nil]) })
}

private func withOptionalCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let owned = strings.map { $0.flatMap { strdup($0) } }
    defer { owned.forEach { free($0) } }
    return body(owned.map { $0.map { UnsafePointer($0) } })
}
