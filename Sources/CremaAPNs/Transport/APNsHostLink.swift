import NIOCore
import Synchronization

/// The connection of one signing key to one APNs host: opened on first use, replaced when it closes, goes
/// away (GOAWAY) or runs out of stream ids. Concurrent sends wait for one connection attempt together.
final class APNsHostLink: Sendable {
    let endpoint: APNsEndpoint
    private let connector: APNsConnector
    private let state = Mutex(State())

    private struct State {
        var current: APNsConnection?
        /// Connections replaced while still open (finishing their last requests), closed with the link.
        var retired: [APNsConnection] = []
        /// The attempt under way, and its number (so that only it clears itself).
        var connecting: (attempt: Int, task: Task<APNsConnection, any Error>)?
        var attempts = 0
        var closed = false
    }

    init(endpoint: APNsEndpoint, connector: APNsConnector) {
        self.endpoint = endpoint
        self.connector = connector
    }

    private enum Next {
        case ready(APNsConnection)
        case wait(Task<APNsConnection, any Error>)
    }

    /// A connection that takes new requests, opening one if needed (one attempt at a time, shared).
    func connection() async throws(APNsClientError) -> APNsConnection {
        let next = try state.withLock { state throws(APNsClientError) -> Next in
            guard !state.closed else { throw .shutDown }
            if let current = state.current {
                if current.acceptsStreams { return .ready(current) }
                state.current = nil
                state.retired.removeAll { !$0.isOpen }
                if current.isOpen { state.retired.append(current) }
            }
            if let connecting = state.connecting { return .wait(connecting.task) }
            let connector = self.connector
            let endpoint = self.endpoint
            state.attempts += 1
            let attempt = state.attempts
            let task = Task { [weak self] () async throws -> APNsConnection in
                do {
                    let connection = try await connector.connect(endpoint)
                    self?.attempt(attempt, ended: connection)
                    return connection
                } catch {
                    self?.attempt(attempt, ended: nil)
                    throw error
                }
            }
            state.connecting = (attempt, task)
            return .wait(task)
        }
        let task: Task<APNsConnection, any Error>
        switch next {
        case .ready(let connection): return connection
        case .wait(let attempt): task = attempt
        }
        do {
            let connection = try await task.value
            if state.withLock({ $0.closed }) {
                connection.close()
                throw APNsClientError.shutDown
            }
            return connection
        } catch {
            throw APNsClient.classify(error)
        }
    }

    /// Closes the connections and refuses new sends (``APNsClientError/shutDown``); the futures complete when
    /// they have closed.
    func close() -> [EventLoopFuture<Void>] {
        let open = state.withLock { state in
            state.closed = true
            defer {
                state.current = nil
                state.retired = []
            }
            return (state.current.map { [$0] } ?? []) + state.retired
        }
        return open.map { $0.close() }
    }

    /// Attempt `attempt` ended with `connection` (nil: it failed). A connection made after ``close()`` is closed.
    private func attempt(_ attempt: Int, ended connection: APNsConnection?) {
        let stale: APNsConnection? = state.withLock { state in
            if state.connecting?.attempt == attempt { state.connecting = nil }
            guard let connection else { return nil }
            if state.closed { return connection }
            if let current = state.current, current !== connection, current.isOpen { state.retired.append(current) }
            state.current = connection
            return nil
        }
        stale?.close()
    }
}
