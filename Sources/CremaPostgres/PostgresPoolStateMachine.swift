/// The bookkeeping of ``PostgresPool``: which slots are free, who waits for one, and what happens on close.
/// No I/O and no clock: each event returns the action the pool performs (connect, resume a waiter, close
/// connections), so every rule is tested with plain values in place of connections.
///
/// A slot is a place for one connection; there are at most `maxConnections`. A slot is ``Slot/empty`` until
/// its first lease connects it, and again when that connect failed. Waiters are served first come, first
/// served, and are named by ids the pool chooses.
struct PostgresPoolStateMachine<Connection> {
    /// A free place for a connection.
    enum Slot {
        /// No connection yet, or its connect failed: the lease connects.
        case empty
        /// A connection that was open when it came back; the lease checks it and repairs it if it broke.
        case connection(Connection)
    }

    /// Why a lease or a waiter fails.
    enum Failure: Equatable {
        case closed
        case timedOut
        case cancelled
    }

    /// What the pool does for a caller that asked for a lease.
    enum LeaseAction {
        /// Use this free slot (connect it if empty); it counts as leased.
        case use(Slot)
        /// Every slot is leased: suspend until ``Handover/resume(_:_:)`` or ``WaiterAction/fail(_:_:)`` names this waiter.
        case wait
        case fail(Failure)
    }

    /// What the pool does with a slot that came back, from a release or a lease that could not ready it.
    enum Handover {
        /// Nobody waits: the slot is kept for the next lease.
        case park
        /// Give the slot to this waiter, who now holds it as leased.
        case resume(_ waiterID: Int, Slot)
        /// The pool is closed: close this connection.
        case closeConnection(Connection)
        case none
    }

    /// What the pool does when a waiter's time ran out or its task was cancelled.
    enum WaiterAction: Equatable {
        /// Fail the waiter with this.
        case fail(_ waiterID: Int, Failure)
        /// The waiter is no longer waiting (it was served or failed already).
        case none
    }

    /// What the pool does when it closes.
    struct CloseAction {
        /// Fail these waiters with ``Failure/closed``.
        var failWaiters: [Int]
        /// Close these idle connections.
        var closeConnections: [Connection]
    }

    let maxConnections: Int
    /// Free slots; the most recently returned is leased first (its connection is the least likely to be stale).
    private(set) var idle: [Slot] = []
    /// Slots handed out so far, free or leased; never more than `maxConnections`.
    private(set) var slotsCreated = 0
    private(set) var leased = 0
    /// Waiters' ids, oldest first.
    private(set) var waiters: [Int] = []
    private(set) var isClosed = false

    init(maxConnections: Int) {
        self.maxConnections = max(1, maxConnections)
    }

    /// Open connections: the idle ones that hold a connection and every leased slot (connecting or in use).
    var openConnections: Int {
        idle.count(where: { if case .connection = $0 { true } else { false } }) + leased
    }

    // MARK: - Events

    /// A caller asks for a connection; `waiterID` names it should it have to wait.
    mutating func lease(waiterID: Int) -> LeaseAction {
        guard !isClosed else { return .fail(.closed) }
        if let slot = idle.popLast() {
            leased += 1
            return .use(slot)
        }
        if slotsCreated < maxConnections {
            slotsCreated += 1
            leased += 1
            return .use(.empty)
        }
        waiters.append(waiterID)
        return .wait
    }

    /// A leased connection came back.
    mutating func released(_ connection: Connection) -> Handover {
        handOver(.connection(connection))
    }

    /// A lease could not ready its slot (the connect or the repair failed); the slot is free again, as it was.
    mutating func leaseFailed(_ slot: Slot) -> Handover {
        handOver(slot)
    }

    /// A waiter waited as long as the pool allows.
    mutating func timedOut(waiterID: Int) -> WaiterAction {
        remove(waiterID, failing: .timedOut)
    }

    /// A waiter's task was cancelled.
    mutating func cancelled(waiterID: Int) -> WaiterAction {
        remove(waiterID, failing: .cancelled)
    }

    /// The pool closes: waiters fail, idle connections close, later leases fail, and leased connections close
    /// when they come back. Closing twice does nothing more.
    mutating func close() -> CloseAction {
        isClosed = true
        let connections = idle.compactMap { slot -> Connection? in
            if case .connection(let connection) = slot { connection } else { nil }
        }
        let action = CloseAction(failWaiters: waiters, closeConnections: connections)
        idle.removeAll()
        waiters.removeAll()
        return action
    }

    // MARK: - Helpers

    /// Gives a returned slot to the oldest waiter, or keeps it; after close, closes its connection.
    private mutating func handOver(_ slot: Slot) -> Handover {
        precondition(leased > 0, "a slot came back that was not leased")
        if isClosed {
            leased -= 1
            guard case .connection(let connection) = slot else { return .none }
            return .closeConnection(connection)
        }
        if !waiters.isEmpty {
            // The slot stays leased, now by the waiter.
            return .resume(waiters.removeFirst(), slot)
        }
        leased -= 1
        idle.append(slot)
        return .park
    }

    private mutating func remove(_ waiterID: Int, failing failure: Failure) -> WaiterAction {
        guard let index = waiters.firstIndex(of: waiterID) else { return .none }
        waiters.remove(at: index)
        return .fail(waiterID, failure)
    }
}

extension PostgresPoolStateMachine.Slot: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine.LeaseAction: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine.Handover: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine.CloseAction: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine: Sendable where Connection: Sendable {}
extension PostgresPoolStateMachine.Slot: Sendable where Connection: Sendable {}
