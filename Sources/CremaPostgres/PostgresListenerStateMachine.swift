/// What ``PostgresListener``'s thread does next: connect, `LISTEN`, deliver `.reconnected` and stay on the
/// connection, back off after a failure, or finish. No I/O and no clock of its own (instants come in with the
/// events), so the backoff, the logging decisions and shutdown are tested without a server.
///
/// The thread reports the outcome of each step, and a shutdown whenever it notices one between steps (a
/// connection attempt or a `LISTEN` in flight ends first). Each event answers the next step.
struct PostgresListenerStateMachine {
    /// The next step.
    enum Action: Equatable {
        /// Open a connection, then report ``connected()`` or ``connectFailed(_:)``.
        case connect
        /// Run `LISTEN` on the open connection, then report ``listened(at:)`` or ``listenFailed(_:)``.
        case listen
        /// `LISTEN` is in place: log it (as the end of `outage` if there was one), deliver `.reconnected` and
        /// stay on the connection until it is lost (``lost(_:at:)``) or shutdown is asked for.
        case deliverReconnected(after: Outage?)
        /// Log `warning` if there is one (the connection is closed), sleep for the delay, then report ``waited()``.
        case wait(Duration, warning: Warning?)
        /// Close the connection if one is open, end the streams and stop.
        case finish
    }

    /// A time without a listening connection, from its loss to `LISTEN` on a new one.
    struct Outage: Equatable {
        /// Connection attempts it took, the successful one included.
        var attempts: Int
        var duration: Duration
    }

    /// What is worth a warning: one per outage, not one per attempt.
    enum Warning: Equatable {
        /// The first attempt failed and no connection has listened yet.
        case firstFailure(String)
        /// A listening connection was lost.
        case lost(String)
    }

    private enum State {
        case idle
        case connecting
        /// Open; `LISTEN` not yet run.
        case connected
        case listening
        case waiting
        case finished
    }

    /// The wait before the first reconnection attempt; each failure doubles it, up to `maxReconnectDelay`.
    let reconnectDelay: Duration
    let maxReconnectDelay: Duration
    private var state = State.idle
    /// Failed attempts since the last connection that listened.
    private(set) var failedAttempts = 0
    private var hasListened = false
    /// When the listening connection was lost; nil before the first one listens and while one does.
    private var outageStart: ContinuousClock.Instant?

    init(reconnectDelay: Duration, maxReconnectDelay: Duration) {
        self.reconnectDelay = reconnectDelay
        self.maxReconnectDelay = max(reconnectDelay, maxReconnectDelay)
    }

    // MARK: - Events

    /// The thread starts: connect at once.
    mutating func start() -> Action {
        guard case .idle = state else { return unexpected("start") }
        state = .connecting
        return .connect
    }

    mutating func connected() -> Action {
        guard case .connecting = state else { return unexpected("connected") }
        state = .connected
        return .listen
    }

    mutating func connectFailed(_ detail: String) -> Action {
        guard case .connecting = state else { return unexpected("connectFailed") }
        return failed(detail)
    }

    /// `LISTEN` failed; the thread closed the connection.
    mutating func listenFailed(_ detail: String) -> Action {
        guard case .connected = state else { return unexpected("listenFailed") }
        return failed(detail)
    }

    mutating func listened(at now: ContinuousClock.Instant) -> Action {
        guard case .connected = state else { return unexpected("listened") }
        let outage = outageStart.map { Outage(attempts: failedAttempts + 1, duration: now - $0) }
        state = .listening
        hasListened = true
        failedAttempts = 0
        outageStart = nil
        return .deliverReconnected(after: outage)
    }

    /// The listening connection was lost (the thread closed it): wait `reconnectDelay`, then connect again.
    mutating func lost(_ detail: String, at now: ContinuousClock.Instant) -> Action {
        guard case .listening = state else { return unexpected("lost") }
        state = .waiting
        outageStart = now
        return .wait(reconnectDelay, warning: .lost(detail))
    }

    mutating func waited() -> Action {
        guard case .waiting = state else { return unexpected("waited") }
        state = .connecting
        return .connect
    }

    /// Shutdown was asked for. Between steps there is nothing to wait for: finish at once.
    mutating func shutdownRequested() -> Action {
        state = .finished
        return .finish
    }

    // MARK: - Helpers

    /// The wait after the `failedAttempts`-th failure in a row: `reconnectDelay` doubled per earlier
    /// failure, capped at `maxReconnectDelay`.
    func backoff(after failedAttempts: Int) -> Duration {
        let doubled = reconnectDelay * (1 << min(max(failedAttempts - 1, 0), 16))
        return min(doubled, maxReconnectDelay)
    }

    private mutating func failed(_ detail: String) -> Action {
        state = .waiting
        failedAttempts += 1
        let warning: Warning? = failedAttempts == 1 && !hasListened ? .firstFailure(detail) : nil
        return .wait(backoff(after: failedAttempts), warning: warning)
    }

    /// An event that cannot happen in this state: after `.finish` the thread has stopped, so anything later
    /// is answered with `.finish` again; anything else is a bug in the thread.
    private func unexpected(_ event: String) -> Action {
        guard case .finished = state else { preconditionFailure("listener: \(event) while \(state)") }
        return .finish
    }
}
