public import Logging

/// A bounded pool of connections. Connections open lazily, are checked and repaired (reconnected) when
/// leased, and a caller waits at most `acquireTimeout` for one to become free.
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
    /// Free slots; a nil slot has no connection yet (or lost it) and connects when leased.
    private var idle: [PostgresConnection?] = []
    private var slotsCreated = 0
    private var leased = 0
    private var waiters: [(id: Int, continuation: CheckedContinuation<PostgresConnection?, any Error>)] = []
    private var nextWaiterID = 0
    private var isClosed = false

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "crema.postgres.pool")) {
        self.configuration = configuration
        self.logger = logger
    }

    public var usage: Usage {
        Usage(
            open: idle.compactMap { $0 }.count + leased, leased: leased, waiting: waiters.count,
            max: configuration.maxConnections)
    }

    /// Leases a connection for the duration of `body`. A connection that broke is repaired on the next lease.
    /// Only leasing and returning touch the actor; `body` runs on the caller's executor, so callers' work
    /// between queries is not serialized through the pool.
    nonisolated public func withConnection<T: Sendable>(
        _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        let connection = try await lease()
        do {
            let value = try await body(connection)
            await release(connection)
            return value
        } catch {
            await release(connection)
            throw error
        }
    }

    /// Runs `body` inside `BEGIN ISOLATION LEVEL …` / `COMMIT`, rolling back when it throws. `BEGIN` goes out with the
    /// body's first statements; a body that ends with `pipeline([..., "COMMIT"])` has committed, and nothing more is sent.
    nonisolated public func withTransaction<T: Sendable>(
        isolation: PostgresIsolation = .readCommitted,
        _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        try await withConnection { connection in
            // BEGIN travels with the body's first statements, and a body may commit with its last ones
            // (`pipeline([..., "COMMIT"])`): a transaction costs no round trip of its own.
            connection.begin(isolation)
            let value: T
            do {
                value = try await body(connection)
            } catch {
                // A broken connection has no transaction left to roll back; the lease repairs it.
                if connection.isInTransaction { try? await connection.rollback() }
                throw error
            }
            if connection.isInTransaction { try await connection.commit() }
            return value
        }
    }

    /// Closes idle connections and refuses further leases; leased connections close when returned.
    public func close() async {
        isClosed = true
        let connections = idle.compactMap { $0 }
        idle.removeAll()
        for waiter in waiters { waiter.continuation.resume(throwing: PostgresError(.closed)) }
        waiters.removeAll()
        for connection in connections { await connection.close() }
    }

    // MARK: - Leasing

    private func lease() async throws -> PostgresConnection {
        guard !isClosed else { throw PostgresError(.closed) }
        let slot: PostgresConnection?
        if let free = idle.popLast() {
            slot = free
        } else if slotsCreated < configuration.maxConnections {
            slotsCreated += 1
            slot = nil
        } else {
            slot = try await waitForSlot()
        }
        leased += 1
        do {
            return try await ready(slot)
        } catch {
            leased -= 1
            handOver(slot)
            throw error
        }
    }

    /// Turns a slot into a usable connection: connects an empty slot, repairs a broken one.
    private func ready(_ slot: PostgresConnection?) async throws -> PostgresConnection {
        guard let connection = slot else {
            return try await PostgresConnection.connect(configuration.conninfo, logger: logger)
        }
        if await connection.isUsable() { return connection }
        logger.info("reconnecting a broken database connection")
        try await connection.reconnect()
        return connection
    }

    private func release(_ connection: PostgresConnection) {
        leased -= 1
        if isClosed {
            Task { await connection.close() }
            return
        }
        handOver(connection)
    }

    /// Gives a slot to the oldest waiter, or puts it back on the idle stack.
    private func handOver(_ slot: PostgresConnection?) {
        if !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: slot)
        } else {
            idle.append(slot)
        }
    }

    private func waitForSlot() async throws -> PostgresConnection? {
        nextWaiterID += 1
        let id = nextWaiterID
        let timeout = configuration.acquireTimeout
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            await self?.expire(id, with: PostgresError(.acquireTimeout, detail: "no connection free within \(timeout)"))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.expire(id, with: CancellationError()) }
        }
    }

    private func expire(_ id: Int, with error: any Error) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: error)
    }
}
