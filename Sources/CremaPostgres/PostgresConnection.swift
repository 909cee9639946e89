import CLibPQ
import Foundation
public import Logging

/// One libpq connection in non-blocking, pipeline mode. A caller's statements go out in one flight without waiting
/// (`PQsendQueryPrepared` … `PQpipelineSync`, `PQflush`); the process's ``PostgresEventLoop`` reads the answers
/// when the socket is readable and resumes the caller once, with every result of the flight. So no thread waits
/// in libpq for a statement, and statements that do not depend on each other cost one round trip together.
/// Statements are prepared on first use and reused by name (up to ``preparedLimit`` per connection); a kept
/// ``PostgresStatement`` is known by its identity, any other statement by its text.
/// Only opening and resetting a connection block, on a dispatch queue of their own, never on Swift's
/// cooperative pool. Task cancellation sends a cancel request to the server (`PQcancel`).
public final class PostgresConnection: @unchecked Sendable, PostgresEventLoop.Handler {
    // Everything below is guarded by `lock`, except `cancelHandle` (guarded by `cancelLock`; libpq allows
    // `PQcancel` from any thread).
    private let lock = NSLock()
    private var handle: OpaquePointer?
    private var socket: Int32 = -1
    private var registration: UInt64 = 0
    private var flight: PostgresFlight?
    /// False after a reconnect whose session set-up failed, or after a send failed midway: the next lease
    /// reconnects.
    private var sessionConfigured = true
    /// A cancel went out since the last reset: the reset at the next lease is routine, not a broken connection.
    private var cancelledSinceReset = false
    /// Set by a caller whose server is not the kind it wants (`reconnectAtNextLease`).
    private var unwantedSinceReset = false
    /// The server refused a write as read-only (25006) since the last reset: after a failover this is the old
    /// primary, now a standby, so the next lease reconnects, and a multi-host conninfo with
    /// `target_session_attrs=read-write` finds the new primary.
    private var refusedWritesSinceReset = false
    /// `BEGIN …` to send ahead of the next flight (``begin(_:)``), so opening a transaction costs no round trip.
    private var pendingBegin: PostgresStatement?
    /// A kept statement's identity, or a statement's text → the name it is prepared under on this connection.
    private var prepared: [PostgresPreparedKey: String] = [:]
    private var preparedSerial = 0
    private var flights = 0
    private var cancelHandle: OpaquePointer?
    private let cancelLock = NSLock()
    private let logger: Logger
    private let loop: PostgresEventLoop

    /// How many distinct statements one connection keeps prepared; later ones run unnamed.
    public static let preparedLimit = 256
    /// Statements longer than this run unnamed (they are one-offs: migrations, generated batches).
    static let preparedMaxLength = 16_384

    private init(handle: OpaquePointer, logger: Logger, loop: PostgresEventLoop) {
        self.handle = handle
        self.logger = logger
        self.loop = loop
        self.cancelHandle = PQgetCancel(handle)
        attach(handle)
    }

    deinit {
        if registration != 0 { loop.deregister(socket, registration: registration) }
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        if let handle { PQfinish(handle) }
    }

    /// Opens a connection from a libpq conninfo string or URI; an empty string uses the `PG*` variables.
    public static func connect(_ conninfo: String, logger: Logger = Logger(label: "crema.postgres")) async throws(PostgresError) -> PostgresConnection {
        let result: Result<OpaquePointer, PostgresError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: openHandle(conninfo)) }
        }
        return PostgresConnection(handle: try result.get(), logger: logger, loop: .shared)
    }

    // MARK: - Statements

    /// Runs a statement with bound parameters and returns its rows (empty for commands).
    @discardableResult
    public func query(_ query: PostgresQuery) async throws(PostgresError) -> [PostgresRow] {
        try await pipeline([query])[0]
    }

    /// Runs statements in one round trip (pipeline mode) and returns each one's rows. The first failure is thrown,
    /// and the statements after it are not run. Inside a transaction a failure leaves it to be rolled back; outside
    /// one, the flight is one implicit transaction, so a failure undoes the statements before it too.
    @discardableResult
    public func pipeline(_ queries: [PostgresQuery]) async throws(PostgresError) -> [[PostgresRow]] {
        for query in queries { try Self.check(query) }
        let results = try await fly(.pipeline, answers: queries.count) { handle, flight throws(PostgresError) in
            try self.sendPipeline(queries, on: handle, into: &flight)
        }
        return results.map { result in
            guard let result else { return [] }
            defer { PQclear(result) }
            return PostgresResult.rows(result)
        }
    }

    /// Runs one or more statements without parameters (migrations, session settings) with the simple protocol.
    /// Never pass values here.
    public func simpleQuery(_ sql: String) async throws(PostgresError) {
        if Self.containsNUL(sql) { throw PostgresError(.invalidParameter, detail: "a statement contains a NUL character") }
        let results = try await fly(.simple, answers: 1) { handle, flight throws(PostgresError) in
            if PQpipelineStatus(handle) != PQ_PIPELINE_OFF, PQexitPipelineMode(handle) != 1 {
                throw PostgresError(.connectionFailed, detail: "could not leave pipeline mode: \(Self.message(handle))")
            }
            if let begin = self.pendingBegin {
                self.pendingBegin = nil
                guard PQsendQuery(handle, begin.sql + "; " + sql) == 1 else { throw Self.sendFailure(handle) }
            } else {
                guard PQsendQuery(handle, sql) == 1 else { throw Self.sendFailure(handle) }
            }
            flight.add(.statement(answer: 0))
        }
        for result in results { if let result { PQclear(result) } }
    }

    /// Opens a transaction with the next flight: `BEGIN` travels with the transaction's first statements.
    public func begin(_ isolation: PostgresIsolation) {
        lock.withLock { pendingBegin = .begin(isolation) }
    }

    /// Whether a transaction is open (or about to be, with the next flight): what ``commit()`` or ``rollback()`` end.
    public var isInTransaction: Bool {
        lock.withLock {
            guard pendingBegin == nil else { return true }
            guard let handle else { return false }
            let status = PQtransactionStatus(handle)
            return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
        }
    }

    /// Commits the open transaction; a `BEGIN` not yet sent is dropped instead (nothing ran, nothing to commit).
    public func commit() async throws(PostgresError) {
        if dropPendingBegin() { return }
        // The server answers COMMIT of a failed transaction with ROLLBACK and no error: say so instead.
        let failed = lock.withLock { handle.map { PQtransactionStatus($0) == PQTRANS_INERROR } ?? false }
        if failed {
            try await query(PostgresStatement.rollback.query)
            throw PostgresError(.server, sqlState: "25P02", detail: "the transaction had failed and was rolled back, not committed")
        }
        try await query(PostgresStatement.commit.query)
    }

    /// Rolls the open transaction back; a `BEGIN` not yet sent is dropped.
    public func rollback() async throws(PostgresError) {
        if dropPendingBegin() { return }
        try await query(PostgresStatement.rollback.query)
    }

    private func dropPendingBegin() -> Bool {
        lock.withLock {
            defer { pendingBegin = nil }
            return pendingBegin != nil
        }
    }

    /// How many round trips (flights) this connection has made: what a command costs, for tests and benchmarks.
    public var roundTrips: Int { lock.withLock { flights } }

    // MARK: - Health and lifecycle

    /// Checks the connection without a round trip: reads whatever the server sent (such as a shutdown
    /// notice) and reports whether the connection is still usable.
    public func isUsable() async -> Bool {
        lock.withLock {
            guard let handle, flight == nil else { return false }
            readWaiting(handle)
            return sessionConfigured && !refusedWritesSinceReset && !unwantedSinceReset && registration != 0 && PQstatus(handle) == CONNECTION_OK
                && PQtransactionStatus(handle) == PQTRANS_IDLE
        }
    }

    /// Whether the server refused a write as read-only since the last reset: why the next lease reconnects.
    public var refusedWrites: Bool { lock.withLock { refusedWritesSinceReset } }

    /// Notes what a statement's failure says about the server behind this connection (a read-only one is left at
    /// the next lease); the pool calls it with every error its callers see.
    public func noteFailure(_ error: any Error) {
        guard let error = error as? PostgresError, error.sqlState == PostgresError.SQLState.readOnlyTransaction else { return }
        lock.withLock { refusedWritesSinceReset = true }
    }

    /// Asks the pool to reconnect this connection at its next lease: its server is not the kind the caller wants (a
    /// standby read URL that reached a primary after a promotion), and libpq's `target_session_attrs` may find one.
    public func reconnectAtNextLease() { lock.withLock { unwantedSinceReset = true } }

    /// Whether `reconnectAtNextLease` was asked since the last reset.
    public var isUnwanted: Bool { lock.withLock { unwantedSinceReset } }

    /// Whether a statement of this connection was cancelled since its last reset (a client left mid-request): why
    /// it is reset at its next lease, which is then routine rather than a fault.
    public var wasCancelled: Bool { lock.withLock { cancelledSinceReset } }

    /// Re-establishes a broken connection with the same parameters (`PQreset`, blocking: on a dispatch queue).
    public func reconnect() async throws(PostgresError) {
        let detached: OpaquePointer? = lock.withLock {
            detach()
            pendingBegin = nil
            prepared = [:]
            sessionConfigured = false
            cancelledSinceReset = false
            refusedWritesSinceReset = false
            unwantedSinceReset = false
            return handle
        }
        guard let detached else { throw PostgresError(.closed) }
        // Nobody else touches the handle while it is off the loop and leased to this caller.
        let resetting = UnsafeHandle(pointer: detached)
        let failure: PostgresError? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let failure = Self.reset(resetting)
                // On this thread: a `PQcancel` in progress may hold the lock through a connect timeout.
                self.replaceCancelHandle(for: resetting)
                continuation.resume(returning: failure)
            }
        }
        let pointer = detached
        if let failure { throw failure }
        lock.withLock {
            guard self.handle == pointer else { return }
            attach(pointer)
            sessionConfigured = true
        }
    }

    private func replaceCancelHandle(for handle: UnsafeHandle) {
        cancelLock.withLock {
            if let cancelHandle { PQfreeCancel(cancelHandle) }
            cancelHandle = PQgetCancel(handle.pointer)
        }
    }

    /// Closes the connection; later calls fail with `closed`.
    public func close() async {
        let pending: PostgresFlight? = lock.withLock {
            detach()
            if let handle { PQfinish(handle) }
            handle = nil
            defer { flight = nil }
            return flight
        }
        if var pending {
            pending.fail(PostgresError(.closed))
            pending.finish().resume()
        }
    }

    // MARK: - Flights

    /// Sends a flight under the lock and waits for the event loop to complete it.
    private func fly(
        _ mode: PostgresFlight.Mode, answers: Int,
        send: @escaping (OpaquePointer, inout PostgresFlight) throws(PostgresError) -> Void
    ) async throws(PostgresError) -> [OpaquePointer?] {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PostgresFlight.Outcome, Never>) in
                lock.lock()
                guard let handle, registration != 0 else {
                    lock.unlock()
                    continuation.resume(returning: .failure(handle == nil ? PostgresError(.closed) : PostgresError(.connectionFailed, detail: "the connection is broken")))
                    return
                }
                precondition(flight == nil, "a PostgresConnection runs one flight at a time")
                flights += 1
                var next = PostgresFlight(mode: mode, answers: answers, continuation: continuation)
                do throws(PostgresError) {
                    try send(handle, &next)
                } catch {
                    // What was queued may be half sent: the connection cannot be trusted with another flight.
                    sessionConfigured = false
                    detach()
                    lock.unlock()
                    next.fail(error)
                    next.finish().resume()
                    return
                }
                flight = next
                let ended = flush(handle)
                lock.unlock()
                ended?.resume()
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get().results
    }

    private func sendPipeline(_ queries: [PostgresQuery], on handle: OpaquePointer, into flight: inout PostgresFlight) throws(PostgresError) {
        if PQpipelineStatus(handle) == PQ_PIPELINE_OFF, PQenterPipelineMode(handle) != 1 {
            throw PostgresError(.connectionFailed, detail: "could not enter pipeline mode: \(Self.message(handle))")
        }
        if let begin = pendingBegin {
            pendingBegin = nil
            try send(begin.query, answer: nil, on: handle, into: &flight)
        }
        for (index, query) in queries.enumerated() {
            try send(query, answer: index, on: handle, into: &flight)
        }
        guard PQpipelineSync(handle) == 1 else { throw Self.sendFailure(handle) }
    }

    /// Queues one statement: by name when prepared, else prepared now (when there is room) and run by name.
    private func send(_ query: PostgresQuery, answer: Int?, on handle: OpaquePointer, into flight: inout PostgresFlight) throws(PostgresError) {
        let key = query.preparedKey
        var name = prepared[key] ?? flight.preparing(key)
        if name == nil, prepared.count < Self.preparedLimit, query.sql.utf8.count <= Self.preparedMaxLength {
            preparedSerial += 1
            let fresh = "crema_\(preparedSerial)"
            guard PQsendPrepare(handle, fresh, query.sql, 0, nil) == 1 else { throw Self.sendFailure(handle) }
            flight.add(.prepare(name: fresh, key: key))
            name = fresh
        }
        let binds = query.binds
        let sent = PostgresCStrings.withOptional(binds) { values in
            if let name {
                return PQsendQueryPrepared(handle, name, Int32(binds.count), values, nil, nil, 0)
            }
            return PQsendQueryParams(handle, query.sql, Int32(binds.count), nil, values, nil, nil, 0)
        }
        guard sent == 1 else { throw Self.sendFailure(handle) }
        flight.add(.statement(answer: answer))
    }

    /// Pushes queued bytes out; asks the loop for writability when the socket buffer is full. Returns the
    /// continuation to resume (outside the lock) when the flight ended here.
    private func flush(_ handle: OpaquePointer) -> PostgresFlight.Ending? {
        switch PQflush(handle) {
        case 0: return nil
        case 1:
            loop.watchWrites(socket, registration: registration, true)
            return nil
        default:
            return broken(handle)
        }
    }

    /// Called by the event loop when the socket is ready: sends what is left, reads what arrived, and resumes the
    /// caller when its flight is complete.
    func socketReady(readable: Bool, writable: Bool) {
        let ended: PostgresFlight.Ending? = lock.withLock {
            guard let handle, registration != 0 else { return nil }
            return serviceSocket(handle, readable: readable, writable: writable)
        }
        ended?.resume()
    }

    /// `socketReady`'s work, under the lock: the flight that ended, if one did.
    private func serviceSocket(_ handle: OpaquePointer, readable: Bool, writable: Bool) -> PostgresFlight.Ending? {
        if writable {
            switch PQflush(handle) {
            case 0: loop.watchWrites(socket, registration: registration, false)
            case 1: break
            default: return broken(handle)
            }
        }
        if readable, PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK { return broken(handle) }
        while var current = flight, PQisBusy(handle) == 0 {
            let result = PQgetResult(handle)
            // A connection that went bad, or a COPY (which this driver does not speak), would hand out the same
            // answer for ever: the flight fails and the connection is repaired at its next lease.
            if PQstatus(handle) != CONNECTION_OK || result.map(Self.isCopy) == true {
                if let result { PQclear(result) }
                return broken(handle)
            }
            let complete = current.take(result, connectionOK: true)
            flight = current
            if complete {
                finishPreparing(current)
                flight = nil
                return current.finish()
            }
        }
        return nil
    }

    private static func isCopy(_ result: OpaquePointer) -> Bool {
        switch PQresultStatus(result) {
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH: return true
        default: return false
        }
    }

    /// Remembers what the server prepared during the flight; forgets every name when the server says they are
    /// gone or stale (a `DISCARD`, or a schema change under a `SELECT *`).
    private func finishPreparing(_ flight: PostgresFlight) {
        if let state = flight.error?.sqlState, state == "26000" || state == "0A000" {
            prepared = [:]
            return
        }
        for (key, name) in flight.prepared { prepared[key] = name }
    }

    /// The connection failed under a flight: stop watching it (a closed socket is always readable) and end the flight.
    private func broken(_ handle: OpaquePointer) -> PostgresFlight.Ending? {
        detach()
        sessionConfigured = false
        guard var pending = flight else { return nil }
        flight = nil
        pending.fail(PostgresError(.connectionFailed, detail: Self.message(handle)))
        return pending.finish()
    }

    /// Puts the connection's socket in non-blocking mode and on the loop (under the lock).
    private func attach(_ handle: OpaquePointer) {
        PQsetnonblocking(handle, 1)
        socket = PQsocket(handle)
        registration = loop.register(socket, handler: self)
    }

    /// Takes the socket off the loop (under the lock). libpq closes its socket when it sees end-of-file; then the
    /// number may already be another connection's, and only the registration goes.
    private func detach() {
        let stillOpen = handle.map { PQsocket($0) == socket } ?? false
        loop.deregister(socket, registration: registration, stillOpen: stillOpen)
        registration = 0
    }

    /// Asks the server to cancel whatever this connection is running. `PQcancel` opens a connection of its
    /// own, so it runs on a background queue, never on the (cooperative) thread that cancelled the task.
    /// A cancel only goes out while a flight runs. It may still land after that flight ended, on whatever the
    /// connection runs next, so a cancelled connection is reset at its next lease (a new backend never sees it).
    private func cancel() {
        let running = lock.withLock {
            guard flight != nil else { return false }
            sessionConfigured = false
            cancelledSinceReset = true
            return true
        }
        guard running else { return }
        DispatchQueue.global().async { [self] in
            cancelLock.withLock {
                guard let cancelHandle else { return }
                var buffer = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
            }
        }
    }
}
