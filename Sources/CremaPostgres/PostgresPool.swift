public import Logging

/// A bounded pool of connections. Connections open lazily, are checked and repaired (reconnected) when
/// leased, and a caller waits at most `acquireTimeout` for one to become free. A caller may name the tenant it
/// works for: while callers wait, tenants take turns and none holds more than its share (``PostgresPoolTenant``,
/// ``PostgresPoolStateMachine``); callers that name none are one more party, first come, first served among themselves.
public actor PostgresPool {
    /// What a pool needs to know; `conninfo` is any libpq conninfo string or URI ("" uses `PG*`).
    public struct Configuration: Sendable {
        public var conninfo: String
        public var maxConnections: Int
        public var acquireTimeout: Duration

        public init(conninfo: String, maxConnections: Int = 10, acquireTimeout: Duration = .seconds(5)) {
            self.conninfo = conninfo
            self.maxConnections = max(1, maxConnections)
            self.acquireTimeout = acquireTimeout
        }
    }

    /// A point-in-time view of the pool, for metrics.
    public struct Usage: Sendable {
        public var open: Int
        public var leased: Int
        public var waiting: Int
        public var max: Int
    }

    public let configuration: Configuration
    private let logger: Logger
    /// Slots, leases and waiters; the pool performs what it answers.
    private var machine: Machine
    /// The suspended callers the machine names as waiting, by id.
    private var waiters: [Int: CheckedContinuation<Machine.Slot, any Error>] = [:]
    private var nextWaiterID = 0

    private typealias Machine = PostgresPoolStateMachine<PostgresConnection>

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "crema.postgres.pool")) {
        self.configuration = configuration
        self.logger = logger
        self.machine = Machine(maxConnections: configuration.maxConnections)
    }

    public var usage: Usage {
        Usage(
            open: machine.openConnections, leased: machine.leased, waiting: machine.waiting,
            max: machine.maxConnections)
    }

    /// Leases a connection for the duration of `body`, in `tenant`'s share (nil: unattributed work). A connection that
    /// broke is repaired on the next lease. Only leasing and returning touch the actor; `body` runs on the caller's
    /// executor, so callers' work between queries is not serialized through the pool.
    nonisolated public func withConnection<T: Sendable>(
        for tenant: PostgresPoolTenant? = nil, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        let connection = try await lease(for: tenant)
        do {
            let value = try await body(connection)
            await release(connection, by: tenant?.name)
            return value
        } catch {
            connection.noteFailure(error)
            await release(connection, by: tenant?.name)
            throw error
        }
    }

    /// Runs `body` inside `BEGIN ISOLATION LEVEL …` / `COMMIT`, rolling back when it throws, on a connection leased in
    /// `tenant`'s share. `BEGIN` goes out with the body's first statements; a body that ends with
    /// `pipeline([..., "COMMIT"])` has committed, and nothing more is sent.
    nonisolated public func withTransaction<T: Sendable>(
        isolation: PostgresIsolation = .readCommitted, for tenant: PostgresPoolTenant? = nil,
        _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        try await withConnection(for: tenant) { connection in try await connection.inTransaction(isolation: isolation, body) }
    }

    /// Closes idle connections and refuses further leases; leased connections close when returned.
    public func close() async {
        let action = machine.close()
        for id in action.failWaiters { waiter(id).resume(throwing: error(.closed)) }
        for connection in action.closeConnections { await connection.close() }
    }

    // MARK: - Leasing

    private func lease(for tenant: PostgresPoolTenant?) async throws -> PostgresConnection {
        nextWaiterID += 1
        let id = nextWaiterID
        let slot: Machine.Slot
        switch machine.lease(waiterID: id, for: tenant?.name, weight: tenant?.weight ?? 1) {
        case .use(let free):
            slot = free
        case .fail(let failure):
            throw error(failure)
        case .wait:
            // No suspension point until the continuation is stored: a hand-over to `id` always finds it.
            let timeout = configuration.acquireTimeout
            // Real monotonic time, not Crema's injected clock: the driver knows no clock, and this is an I/O deadline
            // (how long a caller waits for a connection), not a worker's wait.
            let timer = Task { [weak self] in
                try await Task.sleep(for: timeout)
                await self?.timedOut(id)
            }
            defer { timer.cancel() }
            slot = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    waiters[id] = continuation
                }
            } onCancel: {
                Task { await self.cancelled(id) }
            }
        }
        do {
            return try await ready(slot)
        } catch {
            perform(machine.leaseFailed(slot, by: tenant?.name))
            throw error
        }
    }

    /// Turns a slot into a usable connection: connects an empty slot, repairs a broken one.
    private func ready(_ slot: Machine.Slot) async throws -> PostgresConnection {
        guard case .connection(let connection) = slot else {
            return try await PostgresConnection.connect(configuration.conninfo, logger: logger)
        }
        switch connection.reconnectReason() {
        case nil:
            return connection
        case .refusedWrites:
            // A failover demoted the server behind it; reconnecting reaches the new primary (target_session_attrs).
            logger.warning("reconnecting a database connection whose server refused writes as read-only (a standby after a failover?)")
        case .unwanted:
            logger.info("reconnecting a database connection whose server is not the kind wanted (a standby read URL that reached a primary?)")
        case .cancelled:
            // A cancel may land after its statement ended, on whatever runs next: a new backend never sees it.
            logger.debug("resetting a database connection after a cancelled statement")
        case .broken:
            logger.info("reconnecting a broken database connection")
        }
        try await connection.reconnect()
        return connection
    }

    private func release(_ connection: PostgresConnection, by tenant: String?) {
        perform(machine.released(connection, by: tenant))
    }

    // MARK: - Actions

    private func perform(_ handover: Machine.Handover) {
        switch handover {
        case .park, .none:
            break
        case .resume(let id, let slot):
            waiter(id).resume(returning: slot)
        case .closeConnection(let connection):
            Task { await connection.close() }
        }
    }

    private func timedOut(_ id: Int) {
        perform(machine.timedOut(waiterID: id))
    }

    private func cancelled(_ id: Int) {
        perform(machine.cancelled(waiterID: id))
    }

    private func perform(_ action: Machine.WaiterAction) {
        guard case .fail(let id, let failure) = action else { return }
        waiter(id).resume(throwing: error(failure))
    }

    /// Takes the continuation of a waiter the machine named; it is stored before the pool can next run.
    private func waiter(_ id: Int) -> CheckedContinuation<Machine.Slot, any Error> {
        guard let continuation = waiters.removeValue(forKey: id) else { preconditionFailure("no continuation for waiter \(id)") }
        return continuation
    }

    private func error(_ failure: Machine.Failure) -> any Error {
        switch failure {
        case .closed: PostgresError(.closed)
        case .timedOut: PostgresError(.acquireTimeout, detail: "no connection free within \(configuration.acquireTimeout)")
        case .cancelled: CancellationError()
        }
    }
}
