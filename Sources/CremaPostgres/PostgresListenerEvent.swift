/// What a `PostgresListener` delivers: a notification, or word that it (re)connected and may have missed some,
/// so the consumer runs its catch-up query.
public enum PostgresListenerEvent: Sendable, Hashable {
    case notification(channel: String, payload: String, backendPID: Int32)
    /// Listening (again) after a connection, a reconnection, or a buffer overflow: anything sent before may
    /// have been missed.
    case reconnected
}
