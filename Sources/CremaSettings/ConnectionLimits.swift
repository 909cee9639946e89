/// How long a client may take and how many connections it may hold: a stalled or idle connection costs a
/// file descriptor and memory, so each one is bounded (`CREMA_HTTP_READ_TIMEOUT`, `CREMA_HTTP_IDLE_TIMEOUT`,
/// `CREMA_HTTP_MAX_CONNECTIONS`).
public struct ConnectionLimits: Sendable, Equatable {
    /// Time to receive one whole request, head and body, counted from its first byte (and, on a fresh
    /// connection, from the connect), so a client that trickles bytes cannot hold a connection open.
    public var readTimeout: Duration
    /// Time a keep-alive connection may wait, with no request in progress, for its next request.
    public var idleTimeout: Duration
    /// Connections open at once; past this a new one is answered 503 and closed at once.
    public var maxConnections: Int
    /// Each connection's read deadline is drawn between `1 - readTimeoutSpread` and 1 times `readTimeout`, so
    /// connections opened together (a reconnecting crowd, an attacker) do not all expire, and come back, in
    /// the same instant; never later than `readTimeout`.
    public var readTimeoutSpread: Double = 0.1

    public init(readTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60), maxConnections: Int = 4096) {
        self.readTimeout = readTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
    }

    /// Reads the three `CREMA_HTTP_*` limits; timeouts are seconds (fractions allowed), unset means the default.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        if let text = environment["CREMA_HTTP_READ_TIMEOUT"] { readTimeout = try Self.seconds(text, "CREMA_HTTP_READ_TIMEOUT") }
        if let text = environment["CREMA_HTTP_IDLE_TIMEOUT"] { idleTimeout = try Self.seconds(text, "CREMA_HTTP_IDLE_TIMEOUT") }
        if let text = environment["CREMA_HTTP_MAX_CONNECTIONS"] {
            guard let count = Int(text), (1...1_000_000).contains(count) else { throw .invalid("CREMA_HTTP_MAX_CONNECTIONS", text) }
            maxConnections = count
        }
    }

    /// The read deadline for a connection, `random` in 0..<1 choosing where within the spread it falls.
    public func readDeadline(random: Double) -> Duration {
        readTimeout * (1 - readTimeoutSpread * min(max(random, 0), 1))
    }

    /// The listen backlog: room for as many connections waiting to be accepted as may be open at once (the kernel
    /// clamps it to `net.core.somaxconn`). With Hummingbird's 256, a burst of reconnects overflowed the queue, and
    /// the dropped SYNs came back a second later (docs/reliability.md, stalled connections).
    public var backlog: Int { min(maxConnections, 65_535) }

    private static func seconds(_ text: String, _ name: String) throws(ConfigurationError) -> Duration {
        guard let value = Double(text), value.isFinite, value > 0, value <= 86_400 else { throw .invalid(name, text) }
        return .milliseconds(Int64((value * 1000).rounded()))
    }
}
