/// The bookkeeping of ``PostgresPool``: which slots are free, who waits for one, and what happens on close.
/// No I/O and no clock: each event returns the action the pool performs (connect, resume a waiter, close
/// connections), so every rule is tested with plain values in place of connections.
///
/// A slot is a place for one connection; there are at most `maxConnections`. A slot is ``Slot/empty`` until
/// its first lease connects it, and again when that connect failed. Waiters are named by ids the pool chooses.
///
/// Fair shares: each lease names its ``Party``, a tenant or nil for unattributed work (every caller that names no
/// tenant: one party of weight 1 among the tenants). A free slot is always used at once, so a party
/// alone may hold every connection. When every slot is held, waiters queue per party, oldest first, and the parties
/// take turns: a returned slot goes to the first party in turn that holds less than its share
/// (`maxConnections × weight / the weights of the parties holding or waiting`), or, when none does, to the first in
/// turn (a slot is never kept free while anyone waits); the party served goes to the end of the turn. Callers that all
/// name no tenant are one party, served first come, first served, as before tenants were known.
struct PostgresPoolStateMachine<Connection> {
    /// Who leases: a tenant's name, or nil for unattributed work.
    typealias Party = String?

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
    /// Leased slots by party; a party holding none is absent.
    private(set) var held: [Party: Int] = [:]
    /// The weight of each party that holds or waits, as its latest lease gave it.
    private(set) var weights: [Party: Int] = [:]
    /// Each waiting party's waiters' ids, oldest first.
    private var queues: [Party: [Int]] = [:]
    /// The parties that wait, in turn: the next returned slot goes to the first of them under its share.
    private(set) var turns: [Party] = []
    /// Each waiter's party.
    private var parties: [Int: Party] = [:]
    private(set) var isClosed = false

    init(maxConnections: Int) {
        self.maxConnections = max(1, maxConnections)
    }

    /// Open connections: the idle ones that hold a connection and every leased slot (connecting or in use).
    var openConnections: Int {
        idle.count(where: { if case .connection = $0 { true } else { false } }) + leased
    }

    /// Every waiter's id: party by party in turn, each party's oldest first.
    var waiters: [Int] { turns.flatMap { queues[$0] ?? [] } }

    /// How many callers wait.
    var waiting: Int { parties.count }

    // MARK: - Events

    /// A caller of `party` (with that party's `weight`) asks for a connection; `waiterID` names it should it have to wait.
    mutating func lease(waiterID: Int, for party: Party = nil, weight: Int = 1) -> LeaseAction {
        guard !isClosed else { return .fail(.closed) }
        weights[party] = max(1, weight)
        if let slot = idle.popLast() {
            take(for: party)
            return .use(slot)
        }
        if slotsCreated < maxConnections {
            slotsCreated += 1
            take(for: party)
            return .use(.empty)
        }
        queues[party, default: []].append(waiterID)
        parties[waiterID] = party
        if !turns.contains(party) { turns.append(party) }
        return .wait
    }

    /// A connection `party` leased came back.
    mutating func released(_ connection: Connection, by party: Party = nil) -> Handover {
        handOver(.connection(connection), from: party)
    }

    /// A lease of `party` could not ready its slot (the connect or the repair failed, as when the server is lost); the
    /// slot is free again, as it was.
    mutating func leaseFailed(_ slot: Slot, by party: Party = nil) -> Handover {
        handOver(slot, from: party)
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
        let waited = turns
        queues.removeAll()
        turns.removeAll()
        parties.removeAll()
        for party in waited { forgetIfIdle(party) }
        return action
    }

    // MARK: - Helpers

    /// Whether `party` holds less than its share of the pool among the parties that hold or wait.
    func isUnderShare(_ party: Party) -> Bool {
        let total = weights.values.reduce(0, +)
        return (held[party] ?? 0) * total < maxConnections * (weights[party] ?? 1)
    }

    /// Gives a returned slot to the waiter whose party's turn it is, or keeps it; after close, closes its connection.
    private mutating func handOver(_ slot: Slot, from party: Party) -> Handover {
        precondition((held[party] ?? 0) > 0, "a slot came back that its party did not lease")
        giveBack(from: party)
        if isClosed {
            guard case .connection(let connection) = slot else { return .none }
            return .closeConnection(connection)
        }
        guard let turn = turns.firstIndex(where: { isUnderShare($0) }) ?? turns.indices.first else {
            idle.append(slot)
            return .park
        }
        let next = turns.remove(at: turn)
        var queue = queues[next] ?? []
        let waiterID = queue.removeFirst()
        parties[waiterID] = nil
        if queue.isEmpty {
            queues[next] = nil
        } else {
            queues[next] = queue
            turns.append(next)
        }
        take(for: next)
        return .resume(waiterID, slot)
    }

    private mutating func take(for party: Party) {
        leased += 1
        held[party, default: 0] += 1
    }

    private mutating func giveBack(from party: Party) {
        leased -= 1
        held[party, default: 0] -= 1
        if held[party] == 0 { held[party] = nil }
        forgetIfIdle(party)
    }

    /// A party that neither holds nor waits no longer counts towards the others' shares.
    private mutating func forgetIfIdle(_ party: Party) {
        if held[party] == nil && queues[party] == nil { weights[party] = nil }
    }

    private mutating func remove(_ waiterID: Int, failing failure: Failure) -> WaiterAction {
        guard let party = parties.removeValue(forKey: waiterID) else { return .none }
        queues[party]?.removeAll { $0 == waiterID }
        if queues[party]?.isEmpty == true {
            queues[party] = nil
            turns.removeAll { $0 == party }
            forgetIfIdle(party)
        }
        return .fail(waiterID, failure)
    }
}

extension PostgresPoolStateMachine.Slot: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine.LeaseAction: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine.Handover: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine.CloseAction: Equatable where Connection: Equatable {}
extension PostgresPoolStateMachine: Sendable where Connection: Sendable {}
extension PostgresPoolStateMachine.Slot: Sendable where Connection: Sendable {}
