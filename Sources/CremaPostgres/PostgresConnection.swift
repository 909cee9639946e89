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
///
/// The rules (when a flight may go out, how each statement is sent, what each result is for, when the next lease
/// reconnects) are ``PostgresConnectionStateMachine``'s; this class performs what it answers with libpq.
public final class PostgresConnection: @unchecked Sendable, PostgresEventLoop.Handler {
    typealias Machine = PostgresConnectionStateMachine
    // Guarded by `lock`: the machine, the handle, socket and registration it speaks for, and the flight's caller.
    // `cancelHandle` is guarded by `cancelLock` (libpq allows `PQcancel` from any thread). Only the files
    // PostgresConnection*.swift touch them.
    let lock = NSLock()
    var machine = Machine(preparedLimit: preparedLimit, preparedMaxLength: preparedMaxLength)
    var handle: OpaquePointer?
    private var socket: Int32 = -1
    private var registration: UInt64 = 0
    private var caller: PostgresFlightCaller?
    var cancelHandle: OpaquePointer?
    let cancelLock = NSLock()
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
        let results = try await fly(.pipeline, answers: queries.count) { handle, begin throws(PostgresError) in
            try self.sendPipeline(queries, after: begin, on: handle)
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
        let results = try await fly(.simple, answers: 1) { handle, begin throws(PostgresError) in
            if PQpipelineStatus(handle) != PQ_PIPELINE_OFF, PQexitPipelineMode(handle) != 1 {
                throw PostgresError(.connectionFailed, detail: "could not leave pipeline mode: \(Self.message(handle))")
            }
            guard PQsendQuery(handle, begin.map { $0.sql + "; " + sql } ?? sql) == 1 else { throw Self.sendFailure(handle) }
        }
        for result in results { if let result { PQclear(result) } }
    }

    /// How many round trips (flights) this connection has made: what a command costs, for tests and benchmarks.
    public var roundTrips: Int { lock.withLock { machine.roundTrips } }

    // MARK: - Lifecycle

    /// Closes the connection; later calls fail with `closed`.
    public func close() async {
        let ended: PostgresFlightCaller.Ending? = lock.withLock {
            let ended = perform(machine.close())
            if let handle { PQfinish(handle) }
            handle = nil
            return ended
        }
        ended?.resume()
    }

    // MARK: - Flights

    /// Sends a flight under the lock and waits for the event loop to complete it.
    private func fly(
        _ mode: PostgresFlight.Mode, answers: Int, send: (OpaquePointer, PostgresStatement?) throws(PostgresError) -> Void
    ) async throws(PostgresError) -> [OpaquePointer?] {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PostgresFlightCaller.Outcome, Never>) in
                let next = PostgresFlightCaller(answers: answers, continuation: continuation)
                let ended = lock.withLock { start(mode, for: next, send: send) }
                ended?.resume()
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get().results
    }

    /// `fly`'s work under the lock: the caller to resume at once, if the flight failed or the connection broke.
    private func start(
        _ mode: PostgresFlight.Mode, for next: PostgresFlightCaller, send: (OpaquePointer, PostgresStatement?) throws(PostgresError) -> Void
    ) -> PostgresFlightCaller.Ending? {
        let begin: PostgresStatement?
        switch machine.startFlight(mode) {
        case .fail(let error): return next.finish(failing: error)
        case .send(let pending): begin = pending
        }
        guard let handle else { preconditionFailure("an attached connection without a handle") }
        caller = next
        do throws(PostgresError) {
            try send(handle, begin)
        } catch {
            return perform(machine.sendFailed(error))
        }
        return flush(handle) ? nil : lost(handle)
    }

    private func sendPipeline(_ queries: [PostgresQuery], after begin: PostgresStatement?, on handle: OpaquePointer) throws(PostgresError) {
        if PQpipelineStatus(handle) == PQ_PIPELINE_OFF, PQenterPipelineMode(handle) != 1 {
            throw PostgresError(.connectionFailed, detail: "could not enter pipeline mode: \(Self.message(handle))")
        }
        if let begin { try send(begin.query, answer: nil, on: handle) }
        for (index, query) in queries.enumerated() { try send(query, answer: index, on: handle) }
        guard PQpipelineSync(handle) == 1 else { throw Self.sendFailure(handle) }
    }

    /// Queues one statement the way the machine says: by its prepared name, prepared now and run by name, or unnamed.
    private func send(_ query: PostgresQuery, answer: Int?, on handle: OpaquePointer) throws(PostgresError) {
        let name: String?
        switch machine.queue(query.preparedKey, length: query.sql.utf8.count, answer: answer) {
        case .byName(let known): name = known
        case .unnamed: name = nil
        case .prepare(let fresh):
            guard PQsendPrepare(handle, fresh, query.sql, 0, nil) == 1 else { throw Self.sendFailure(handle) }
            name = fresh
        }
        let binds = query.binds
        let sent = PostgresCStrings.withOptional(binds) { values in
            if let name { return PQsendQueryPrepared(handle, name, Int32(binds.count), values, nil, nil, 0) }
            return PQsendQueryParams(handle, query.sql, Int32(binds.count), nil, values, nil, nil, 0)
        }
        guard sent == 1 else { throw Self.sendFailure(handle) }
    }

    /// Pushes queued bytes out, asking the loop for writability while some are left; false when the connection failed.
    private func flush(_ handle: OpaquePointer) -> Bool {
        let left = PQflush(handle)
        guard left >= 0 else { return false }
        switch machine.flushed(pending: left == 1) {
        case .watch: loop.watchWrites(socket, registration: registration, true)
        case .stopWatching: loop.watchWrites(socket, registration: registration, false)
        case .none: break
        }
        return true
    }

    /// Called by the event loop when the socket is ready: sends what is left, reads what arrived, and resumes the
    /// caller when its flight is complete.
    func socketReady(readable: Bool, writable: Bool) {
        let ended: PostgresFlightCaller.Ending? = lock.withLock {
            guard let handle, machine.state == .attached else { return nil }
            return serviceSocket(handle, readable: readable, writable: writable)
        }
        ended?.resume()
    }

    /// `socketReady`'s work, under the lock: the flight that ended, if one did.
    private func serviceSocket(_ handle: OpaquePointer, readable: Bool, writable: Bool) -> PostgresFlightCaller.Ending? {
        if writable, !flush(handle) { return lost(handle) }
        if readable, PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK { return lost(handle) }
        while machine.flight != nil, PQisBusy(handle) == 0 {
            let result = PQgetResult(handle)
            // A connection that went bad, or a COPY (which this driver does not speak), would hand out the same
            // answer for ever: the flight fails and the connection is repaired at its next lease.
            if PQstatus(handle) != CONNECTION_OK || result.map(PostgresResult.isCopy) == true {
                if let result { PQclear(result) }
                return lost(handle)
            }
            switch machine.received(PostgresResult.kind(result)) {
            case .keep(let answer): if let result { caller?.keep(result, as: answer) }
            case .discard: if let result { PQclear(result) }
            case .complete(let failure):
                if let result { PQclear(result) }
                return finishFlight(failing: failure)
            }
        }
        return nil
    }

    /// The connection failed: the machine says what of it to undo.
    private func lost(_ handle: OpaquePointer) -> PostgresFlightCaller.Ending? {
        perform(machine.connectionLost(Self.message(handle)))
    }

    /// Takes the socket off the loop and ends the flight in the air, as the machine answered a loss or a close.
    private func perform(_ loss: Machine.Loss) -> PostgresFlightCaller.Ending? {
        guard case .detach(let failure) = loss else { return nil }
        detach()
        return finishFlight(failing: failure)
    }

    private func finishFlight(failing failure: PostgresError?) -> PostgresFlightCaller.Ending? {
        defer { caller = nil }
        return caller?.finish(failing: failure)
    }

    /// Puts the connection's socket in non-blocking mode and on the loop (under the lock).
    func attach(_ handle: OpaquePointer) {
        PQsetnonblocking(handle, 1)
        socket = PQsocket(handle)
        registration = loop.register(socket, handler: self)
        machine.attached(registered: registration != 0)
    }

    /// Takes the socket off the loop (under the lock). libpq closes its socket when it sees end-of-file; then the
    /// number may already be another connection's, and only the registration goes.
    func detach() {
        let stillOpen = handle.map { PQsocket($0) == socket } ?? false
        loop.deregister(socket, registration: registration, stillOpen: stillOpen)
        registration = 0
    }

    /// Asks the server to cancel whatever this connection is running. `PQcancel` opens a connection of its
    /// own, so it runs on a background queue, never on the (cooperative) thread that cancelled the task.
    /// A cancel only goes out while a flight runs. It may still land after that flight ended, on whatever the
    /// connection runs next, so a cancelled connection is reset at its next lease (a new backend never sees it).
    private func cancel() {
        guard lock.withLock({ machine.cancelRequested() }) == .sendCancel else { return }
        DispatchQueue.global().async { [self] in
            cancelLock.withLock {
                guard let cancelHandle else { return }
                var buffer = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
            }
        }
    }

    /// What the server says of the session's transaction (under the lock).
    func transactionStatus() -> Machine.TransactionStatus {
        guard let handle else { return .unknown }
        return switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: .idle
        case PQTRANS_ACTIVE: .active
        case PQTRANS_INTRANS: .inTransaction
        case PQTRANS_INERROR: .failed
        default: .unknown
        }
    }
}
