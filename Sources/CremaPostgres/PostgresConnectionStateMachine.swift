/// The bookkeeping of ``PostgresConnection``: whether a flight may go out, how each statement of it is sent (by a
/// prepared name, prepared now, or unnamed), what each result libpq hands over is for, when the flight is complete,
/// a `BEGIN` waiting for the next flight, and whether the next lease must reconnect, and why. No I/O, no libpq and
/// no lock: each event returns what the connection does (send, detach the socket, resume the caller with this
/// failure, reconnect), so every rule is tested with plain values, as ``PostgresPoolStateMachine`` is for the pool.
///
/// The connection calls it under its lock, from a caller's task (a flight going out, a lease, a reset) and from the
/// event loop's thread (the socket is ready). One flight is in the air at a time.
struct PostgresConnectionStateMachine {
    /// Where the connection's socket is.
    enum State: Equatable {
        /// The session is being set up off the loop: just opened, or being reset (`PQreset`).
        case connecting
        /// On the event loop: flights may go out.
        case attached
        /// Off the loop: it broke, a send failed midway, its socket could not join the loop, or its reset failed.
        /// Flights fail until a lease reconnects it.
        case detached
        case closed
    }

    /// Why the next lease reconnects, in the order the pool reports them (the first that applies).
    enum ReconnectReason: Equatable {
        /// The server refused a write as read-only: after a failover this is the old primary, now a standby, and a
        /// multi-host conninfo with `target_session_attrs=read-write` finds the new primary.
        case refusedWrites
        /// A caller found the server not the kind it wants (a standby read URL that reached a primary).
        case unwanted
        /// A cancel went out: it may land after its statement ended, on whatever runs next, so a new backend is
        /// taken. Routine, not a fault.
        case cancelled
        /// The connection broke, is off the loop, or its session is not in a state to hand out.
        case broken
    }

    /// The server's view of the session's transaction (`PQtransactionStatus`).
    enum TransactionStatus: Equatable {
        case idle
        /// A command is in progress.
        case active
        case inTransaction
        case failed
        /// The connection is bad, or there is none.
        case unknown
    }

    enum LeaseAction: Equatable {
        case use
        case reconnect(ReconnectReason)
    }

    /// What a caller asking for a flight does.
    enum FlightStart {
        /// Send the flight, with this `BEGIN` ahead of its statements if one is waiting.
        case send(begin: PostgresStatement?)
        case fail(PostgresError)
    }

    /// How one statement of a pipelined flight is sent.
    enum StatementSend: Equatable {
        /// Run it by the name it is prepared under.
        case byName(String)
        /// Prepare it under this name, then run it by that name.
        case prepare(String)
        /// Run it with its text (no room to keep it, or a one-off).
        case unnamed
    }

    /// What the connection does with a value of `PQgetResult`.
    enum Received: Equatable {
        /// Hand the result to the flight's caller as this answer.
        case keep(answer: Int)
        /// Free the result, if it is one.
        case discard
        /// Free the result, if it is one, and resume the caller: with its answers, or with this failure.
        case complete(failing: PostgresError?)
    }

    /// What the connection does when its socket's bytes could not all be written.
    enum WriteWatch: Equatable {
        /// Ask the loop for writability: bytes are left to send.
        case watch
        /// Stop asking: everything is sent.
        case stopWatching
        case none
    }

    /// What the connection does when it broke, a send failed, or it is closed.
    enum Loss: Equatable {
        /// Take the socket off the loop; then resume the flight's caller with this failure, if one was in the air.
        case detach(failing: PostgresError?)
        /// Nothing more: it was closed already.
        case none
    }

    /// What the connection does when its caller's task is cancelled.
    enum CancelAction: Equatable {
        /// Ask the server to cancel what runs (`PQcancel`, off the cooperative pool).
        case sendCancel
        /// Nothing runs: nothing to cancel.
        case none
    }

    /// What the connection does at the end of a transaction.
    enum TransactionEnd: Equatable {
        /// Nothing: the `BEGIN` never went out, so there is nothing to end.
        case none
        case commit
        case rollback
        /// Roll back, and throw 25P02: the server answers `COMMIT` of a failed transaction with `ROLLBACK` and no error.
        case rollbackFailed
    }

    /// What a lease that reconnects does.
    enum ResetStart: Equatable {
        /// Take the socket off the loop, then reset the session off the cooperative pool and report ``resetEnded(_:)``.
        case reset
        /// Throw this: the connection is closed.
        case fail(PostgresError)
    }

    /// What the connection does after a reset.
    enum ResetEnd: Equatable {
        /// Put the socket on the loop, then report ``attached(registered:)``.
        case attach
        /// Throw this; the connection stays off the loop, and the next lease tries again.
        case fail(PostgresError)
        /// Nothing: the connection was closed while it was reset.
        case none
    }

    private(set) var state: State = .connecting
    /// The flight in the air, if any.
    private(set) var flight: PostgresFlight?
    /// `BEGIN …` to send ahead of the next flight (``begin(_:)``), so opening a transaction costs no round trip.
    private(set) var pendingBegin: PostgresStatement?
    private(set) var prepared: PostgresPreparedNames
    /// How many flights went out: what a command costs, for tests and benchmarks.
    private(set) var roundTrips = 0
    /// Whether the loop is asked for writability (a flight did not fit in the socket buffer).
    private(set) var watchingWrites = false
    /// False after a send failed midway, the connection broke, a cancel went out, or while a reset runs (and after
    /// one failed): the session cannot be handed out as it is.
    private(set) var sessionTrusted = true
    // Since the last reset:
    private(set) var cancelled = false
    private(set) var unwanted = false
    private(set) var refusedWrites = false

    init(preparedLimit: Int, preparedMaxLength: Int) {
        prepared = PostgresPreparedNames(limit: preparedLimit, maxLength: preparedMaxLength)
    }

    /// On the loop with no flight in the air: the socket may be read without taking a flight's answers.
    var isIdle: Bool { state == .attached && flight == nil }

    // MARK: - Opening and resetting

    /// The session is set up and its socket was put on the loop; `registered` false if the loop refused it.
    mutating func attached(registered: Bool) {
        guard state == .connecting else { preconditionFailure("attached while \(state)") }
        state = registered ? .attached : .detached
        watchingWrites = false
    }

    /// A lease reconnects (`PQreset`): forget what the old session had.
    mutating func resetStarted() -> ResetStart {
        guard flight == nil else { preconditionFailure("a reset under a flight: two users of one connection") }
        guard state != .closed else { return .fail(PostgresError(.closed)) }
        state = .connecting
        watchingWrites = false
        pendingBegin = nil
        prepared.forgetAll()
        sessionTrusted = false
        cancelled = false
        unwanted = false
        refusedWrites = false
        return .reset
    }

    /// The reset ended: with its failure, or nil when the session is set up again.
    mutating func resetEnded(_ failure: PostgresError?) -> ResetEnd {
        if let failure {
            if state == .connecting { state = .detached }
            return .fail(failure)
        }
        guard state == .connecting else { return .none }
        sessionTrusted = true
        return .attach
    }

    /// The lease asks whether to hand the connection out as it is. `connectionOK` and `transaction` are what libpq says
    /// after reading whatever the server sent while the connection was idle (read only when ``isIdle``).
    func leased(connectionOK: Bool, transaction: TransactionStatus) -> LeaseAction {
        if refusedWrites { return .reconnect(.refusedWrites) }
        if unwanted { return .reconnect(.unwanted) }
        if cancelled { return .reconnect(.cancelled) }
        guard sessionTrusted, isIdle, connectionOK, transaction == .idle else { return .reconnect(.broken) }
        return .use
    }

    /// A caller saw this failure from a statement of this connection: a write refused as read-only reconnects at the
    /// next lease.
    mutating func noteFailure(_ error: PostgresError) {
        if error.sqlState == PostgresError.SQLState.readOnlyTransaction { refusedWrites = true }
    }

    /// A caller found the server not the kind it wants: reconnect at the next lease.
    mutating func markUnwanted() { unwanted = true }

    // MARK: - Transactions

    /// Opens a transaction with the next flight: `BEGIN` travels with the transaction's first statements.
    mutating func begin(_ isolation: PostgresIsolation) { pendingBegin = .begin(isolation) }

    /// Whether a transaction is open, or about to be with the next flight.
    func isInTransaction(_ transaction: TransactionStatus) -> Bool {
        pendingBegin != nil || transaction == .inTransaction || transaction == .failed
    }

    mutating func commit(_ transaction: TransactionStatus) -> TransactionEnd {
        if dropPendingBegin() { return .none }
        return transaction == .failed ? .rollbackFailed : .commit
    }

    mutating func rollback() -> TransactionEnd {
        dropPendingBegin() ? .none : .rollback
    }

    private mutating func dropPendingBegin() -> Bool {
        defer { pendingBegin = nil }
        return pendingBegin != nil
    }

    // MARK: - Flights

    /// A caller asks to send a flight. A simple flight is one statement (answer 0) sent with the simple protocol.
    mutating func startFlight(_ mode: PostgresFlight.Mode) -> FlightStart {
        switch state {
        case .closed: return .fail(PostgresError(.closed))
        case .connecting, .detached: return .fail(PostgresError(.connectionFailed, detail: "the connection is broken"))
        case .attached: break
        }
        precondition(flight == nil, "a PostgresConnection runs one flight at a time")
        roundTrips += 1
        var next = PostgresFlight(mode: mode)
        if mode == .simple { next.add(.statement(answer: 0)) }
        flight = next
        defer { pendingBegin = nil }
        return .send(begin: pendingBegin)
    }

    /// A statement of the pipelined flight going out, whose rows go to `answer` (nil: nobody asked, as for `BEGIN`).
    mutating func queue(_ key: PostgresPreparedKey, length: Int, answer: Int?) -> StatementSend {
        guard flight != nil else { preconditionFailure("a statement queued with no flight") }
        let send: StatementSend
        if let name = prepared.name(for: key) ?? flight?.preparing(key) {
            send = .byName(name)
        } else if let fresh = prepared.newName(forLength: length) {
            flight?.add(.prepare(name: fresh, key: key))
            send = .prepare(fresh)
        } else {
            send = .unnamed
        }
        flight?.add(.statement(answer: answer))
        return send
    }

    /// libpq refused part of the flight: what was queued may be half sent, so the connection is trusted with no
    /// other flight.
    mutating func sendFailed(_ error: PostgresError) -> Loss {
        lost(error)
    }

    /// `PQflush` sent everything (`pending` false) or left bytes for when the socket is writable.
    mutating func flushed(pending: Bool) -> WriteWatch {
        guard pending != watchingWrites, state == .attached else { return .none }
        watchingWrites = pending
        return pending ? .watch : .stopWatching
    }

    /// libpq handed over a value of `PQgetResult` for the flight in the air.
    mutating func received(_ result: PostgresFlight.Result) -> Received {
        guard flight != nil else { preconditionFailure("a result with no flight") }
        switch flight?.take(result) {
        case .keep(let answer): return .keep(answer: answer)
        case .discard, nil: return .discard
        case .complete:
            guard let done = flight else { return .discard }
            flight = nil
            prepared.flightEnded(prepared: done.prepared, error: done.error)
            return .complete(failing: done.error)
        }
    }

    /// The connection broke (the socket closed or failed, libpq reports it bad, or the server began a COPY, which
    /// this driver does not speak): the flight in the air fails, and the next lease reconnects.
    mutating func connectionLost(_ detail: String) -> Loss {
        lost(PostgresError(.connectionFailed, detail: detail))
    }

    /// The caller's task was cancelled. A cancel request goes out only while a flight is in the air; it may land after
    /// the flight ended, on whatever runs next, so the next lease reconnects.
    mutating func cancelRequested() -> CancelAction {
        guard flight != nil else { return .none }
        sessionTrusted = false
        cancelled = true
        return .sendCancel
    }

    /// The connection is closed; later flights fail with `closed`.
    mutating func close() -> Loss {
        guard state != .closed else { return .none }
        state = .closed
        watchingWrites = false
        return .detach(failing: endFlight(PostgresError(.closed)))
    }

    // MARK: - Helpers

    private mutating func lost(_ error: PostgresError) -> Loss {
        guard state != .closed else { return .none }
        state = .detached
        watchingWrites = false
        sessionTrusted = false
        return .detach(failing: endFlight(error))
    }

    /// Ends the flight in the air, if any, with its first error: a server's failure before the loss stays the answer.
    private mutating func endFlight(_ error: PostgresError) -> PostgresError? {
        guard var ending = flight else { return nil }
        flight = nil
        ending.fail(error)
        return ending.error
    }
}
