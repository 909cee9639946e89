import CremaPostgres
import CremaStore
import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization

/// The dashboard stream's one database listener per process, fanned out to every open stream.
///
/// Subscribers do not receive rows from the hub, only wake-ups: each one then reads "changes in my store after
/// my cursor" itself (`StreamRepository.streamChanges`). So a notification, a listener reconnect (`.reconnected`), a
/// `Last-Event-ID` resume and a change made by another `crema` process are all handled the same way, and a gap
/// can only delay an event, never lose it. Wake-ups coalesce: each subscriber holds at most one pending wake-up,
/// so a slow client buffers nothing here and catches up from its cursor when it can write again.
public final class StreamHub: Service, CustomStringConvertible, Sendable {
    struct Subscriber {
        var store: StoreKey
        var continuation: AsyncStream<Void>.Continuation
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
        var next = 0
        var closed = false
    }

    let conninfo: String?
    let logger: Logger
    /// Every subscriber re-reads this often even without notifications: the safety net for a notification
    /// that arrived while an older transaction was still running (its events become readable only later).
    let sweepInterval: Duration
    private let state = Mutex(State())

    public var description: String { "StreamHub" }

    /// `conninfo` nil: no LISTEN connection, subscribers see changes at the next sweep.
    public init(conninfo: String?, sweepInterval: Duration = .seconds(1), logger: Logger) {
        self.conninfo = conninfo
        self.sweepInterval = sweepInterval
        self.logger = logger
    }

    /// Wake-ups for one stream of `store`; the first one is already pending. Ends when the hub shuts down.
    func subscribe(tenant: String, store: String) -> (id: Int, wakeUps: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield()
        let id = state.withLock { state in
            state.next += 1
            if state.closed {
                continuation.finish()
            } else {
                state.subscribers[state.next] = Subscriber(store: StoreKey(tenant: tenant, store: store), continuation: continuation)
            }
            return state.next
        }
        return (id, stream)
    }

    func unsubscribe(_ id: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: id) }?.continuation.finish()
    }

    /// Wakes the subscribers of `store`, or all of them when `store` is nil.
    func wake(store: StoreKey?) {
        state.withLock { state in
            for subscriber in state.subscribers.values where store == nil || subscriber.store == store {
                subscriber.continuation.yield()
            }
        }
    }

    public func run() async throws {
        let listener = conninfo.map { PostgresListener(conninfo: $0, channels: [OrderTransaction.changeChannel], logger: logger) }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let listener {
                    group.addTask {
                        for await event in listener.events() {
                            switch event {
                            case .notification(_, let payload, _): self.wake(store: Self.store(inNotification: payload))
                            case .reconnected: self.wake(store: nil)
                            }
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: self.sweepInterval)
                        self.wake(store: nil)
                    }
                }
                await group.next()
                await listener?.shutdown()
                group.cancelAll()
            }
        }
        await listener?.shutdown()
        // Open streams end so the HTTP server can drain.
        let finishing = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in finishing { subscriber.continuation.finish() }
    }

    /// `tenant_id` and `store_id` from the change notification's JSON; nil (wake everyone) if they cannot be read.
    static func store(inNotification payload: String) -> StoreKey? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
            let tenant = object["tenant_id"] as? String, let store = object["store_id"] as? String
        else { return nil }
        return StoreKey(tenant: tenant, store: store)
    }

    /// A store is named by its tenant and its id: store ids are unique within a tenant only.
    struct StoreKey: Hashable, Sendable {
        var tenant: String
        var store: String
    }
}
