public import CremaStore
public import Logging
public import ServiceLifecycle
import Synchronization

/// The process's order changes (`ChangeFeed`: its own commits, and other processes' announcements), fanned out
/// to every open dashboard stream of the store that changed.
///
/// Subscribers do not receive rows from the hub, only wake-ups: each one then reads "changes in my store after
/// my cursor" itself (`StreamRepository.streamChanges`). So a change, a listener reconnect (`.everything`), a
/// `Last-Event-ID` resume and a change made by another `crema` process are all handled the same way, and a gap
/// can only delay an event, never lose it. Wake-ups coalesce: each subscriber holds at most one pending wake-up,
/// so a slow client buffers nothing here and catches up from its cursor when it can write again.
public final class StreamHub: Service, CustomStringConvertible, Sendable {
    struct Subscriber {
        var store: StoreKey
        /// The API key the stream counts against (docs/limits.md).
        var holder: String
        var continuation: AsyncStream<Void>.Continuation
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
        /// Open streams per holder, kept beside `subscribers` so a refusal costs no walk over every stream.
        var held: [String: Int] = [:]
        var next = 0
        var closed = false
    }

    let changes: ChangeFeed?
    let logger: Logger
    /// Every subscriber re-reads this often even without changes: the safety net for a change published while an
    /// older transaction was still running (its events become readable only later).
    let sweepInterval: Duration
    private let state = Mutex(State())

    public var description: String { "StreamHub" }

    /// `changes` nil: subscribers see changes at the next sweep.
    public init(changes: ChangeFeed?, sweepInterval: Duration = .seconds(1), logger: Logger) {
        self.changes = changes
        self.sweepInterval = sweepInterval
        self.logger = logger
    }

    /// Wake-ups for one stream of `store` counted against `holder`; the first one is already pending. Ends when the hub
    /// shuts down. Nil when `holder` already holds `limit` streams.
    func subscribe(tenant: String, store: String, holder: String, limit: Int) -> (id: Int, wakeUps: AsyncStream<Void>)? {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield()
        let id: Int? = state.withLock { state in
            guard state.held[holder, default: 0] < limit else { return nil }
            state.next += 1
            if state.closed {
                continuation.finish()
            } else {
                state.subscribers[state.next] = Subscriber(
                    store: StoreKey(tenant: tenant, store: store), holder: holder, continuation: continuation)
                state.held[holder, default: 0] += 1
            }
            return state.next
        }
        guard let id else { return nil }
        return (id, stream)
    }

    func unsubscribe(_ id: Int) {
        state.withLock { state -> Subscriber? in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            let left = state.held[subscriber.holder, default: 1] - 1
            state.held[subscriber.holder] = left > 0 ? left : nil
            return subscriber
        }?.continuation.finish()
    }

    /// Streams `holder` holds open now.
    func streams(heldBy holder: String) -> Int {
        state.withLock { $0.held[holder, default: 0] }
    }

    /// Wakes the subscribers of `stores`, or all of them when `stores` is nil.
    func wake(_ stores: Set<StoreKey>?) {
        state.withLock { state in
            for subscriber in state.subscribers.values where stores?.contains(subscriber.store) ?? true {
                subscriber.continuation.yield()
            }
        }
    }

    public func run() async throws {
        let changes = self.changes?.subscribe(to: .orders)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let changes {
                    group.addTask {
                        for await change in changes {
                            switch change {
                            case .stores(let stores): self.wake(stores)
                            case .everything: self.wake(nil)
                            }
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: self.sweepInterval)
                        self.wake(nil)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        // Open streams end so the HTTP server can drain.
        let finishing = state.withLock { state in
            state.closed = true
            defer {
                state.subscribers = [:]
                state.held = [:]
            }
            return Array(state.subscribers.values)
        }
        for subscriber in finishing { subscriber.continuation.finish() }
    }
}
