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
        var continuation: AsyncStream<Void>.Continuation
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
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
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in finishing { subscriber.continuation.finish() }
    }
}
