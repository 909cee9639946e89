/// What a ``PostgresListener`` delivers.
public enum PostgresListenerEvent: Sendable, Hashable {
    /// A `NOTIFY` (or `pg_notify`) on one of the listener's channels. `backendPID` is the process id of the
    /// backend that sent it, not the listener's own.
    case notification(channel: String, payload: String, backendPID: Int32)
    /// The listener is connected and listening, and something may have been missed before this point: the
    /// first connection, a reconnection after the connection was lost, or a consumer that fell so far behind
    /// that its backlog was dropped. Consumers answer it with a catch-up query (read the state, or claim
    /// pending rows) rather than relying on the notifications alone.
    case reconnected
}
