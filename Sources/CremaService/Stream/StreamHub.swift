public import CremaClock
public import CremaStore
import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization

/// The process's order changes (`ChangeFeed`: its own commits, and other processes' announcements), fanned out
/// to every open dashboard stream of the store that changed.
///
/// Subscribers do not receive rows from the hub, only wake-ups: each one then reads "changes in my store after
/// my cursor" itself (`StreamRepository.streamChanges`). The hub's own tick, the safety net for a missed
/// announcement, is one statement for every open stream (each store's head, `StreamRepository.streamHeads`): only
/// streams behind their store's head are woken, so a thousand idle streams cost one read a tick, not a thousand. The
/// same tick closes the streams of keys that were revoked or expired. So a change, a listener reconnect (`.everything`), a
/// `Last-Event-ID` resume and a change made by another `crema` process are all handled the same way, and a gap
/// can only delay an event, never lose it. Wake-ups coalesce: each subscriber holds at most one pending wake-up,
/// so a slow client buffers nothing here and catches up from its cursor when it can write again.
public final class StreamHub: Service, CustomStringConvertible, Sendable {
    struct Subscriber {
        var store: StoreKey
        /// The API key the stream counts against (docs/limits.md).
        var holder: String
        var continuation: AsyncStream<Void>.Continuation
        /// The cursor of the last change the stream wrote (or the one it started after).
        var cursor: Int64
    }

    /// A read of one store's changes after a cursor, shared by the streams woken by the same change at that cursor.
    struct SharedRead {
        var after: Int64
        var generation: Int
        var task: Task<StreamPage, any Error>
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
        /// Per store, how many wake-ups it has had: a read is shared only by streams woken by the same one.
        var generations: [StoreKey: Int] = [:]
        /// Per store, its latest read.
        var reads: [StoreKey: SharedRead] = [:]
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
    /// Reads the stores' heads and the keys' validity on each tick; nil wakes every stream on each tick instead.
    let stream: StreamRepository?
    public let clock: CremaClock
    private let state = Mutex(State())

    public var description: String { "StreamHub" }

    /// `changes` nil: subscribers see changes at the next sweep.
    public init(
        changes: ChangeFeed?, stream: StreamRepository? = nil, sweepInterval: Duration = .seconds(1),
        clock: CremaClock, logger: Logger
    ) {
        self.changes = changes
        self.stream = stream
        self.sweepInterval = sweepInterval
        self.clock = clock
        self.logger = logger
    }

    /// Wake-ups for one stream of `store` counted against `holder`; the first one is already pending. Ends when the hub
    /// shuts down. Nil when `holder` already holds `limit` streams.
    public func subscribe(tenant: String, store: String, holder: String, limit: Int, after cursor: Int64 = 0) -> (id: Int, wakeUps: AsyncStream<Void>)? {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield()
        let id: Int? = state.withLock { state in
            guard state.held[holder, default: 0] < limit else { return nil }
            state.next += 1
            if state.closed {
                continuation.finish()
            } else {
                state.subscribers[state.next] = Subscriber(
                    store: StoreKey(tenant: tenant, store: store), holder: holder, continuation: continuation, cursor: cursor)
                state.held[holder, default: 0] += 1
            }
            return state.next
        }
        guard let id else { return nil }
        return (id, stream)
    }

    public func unsubscribe(_ id: Int) {
        state.withLock { state -> Subscriber? in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            let left = state.held[subscriber.holder, default: 1] - 1
            state.held[subscriber.holder] = left > 0 ? left : nil
            if !state.subscribers.values.contains(where: { $0.store == subscriber.store }) {
                state.reads[subscriber.store] = nil
                state.generations[subscriber.store] = nil
            }
            return subscriber
        }?.continuation.finish()
    }

    /// The page of `store`'s changes after `cursor`: read (and encoded) by the first stream that asks after a wake-up,
    /// and handed to every other stream of the store at the same cursor woken by the same change. A thousand streams
    /// of one store cost one read and one encoding per change, not a thousand.
    public func page(_ store: StoreKey, after cursor: Int64, read: @escaping @Sendable () async throws -> StreamPage) async throws -> StreamPage {
        let task = state.withLock { state -> Task<StreamPage, any Error> in
            let generation = state.generations[store, default: 0]
            if let shared = state.reads[store], shared.after == cursor, shared.generation == generation { return shared.task }
            let task = Task { try await read() }
            state.reads[store] = SharedRead(after: cursor, generation: generation, task: task)
            return task
        }
        return try await task.value
    }

    /// Notes that stream `id` has written everything up to `cursor`.
    public func advance(_ id: Int, to cursor: Int64) {
        state.withLock { state in state.subscribers[id]?.cursor = cursor }
    }

    /// What one tick did.
    public struct Tick: Sendable, Hashable {
        /// Streams woken to read their changes.
        public var woken: Int
        /// Streams closed because their key can no longer be used.
        public var closed: Int

        public init(woken: Int, closed: Int) {
            self.woken = woken
            self.closed = closed
        }
    }

    /// One tick: wakes the streams behind their store's head and closes those of unusable keys, in two statements for
    /// all of them; wakes every stream when the heads cannot be read.
    @discardableResult
    public func tick() async -> Tick {
        guard let stream else { return Tick(woken: wake(nil), closed: 0) }
        let (stores, keys) = state.withLock { state in
            (Set(state.subscribers.values.map(\.store)), Set(state.subscribers.values.compactMap { Self.keyID(of: $0.holder) }))
        }
        var closed = 0
        if let unusable = try? await stream.unusableKeys(Array(keys), now: clock.now), !unusable.isEmpty { closed = close(keysWithIDs: unusable) }
        guard let heads = try? await stream.streamHeads(Array(stores)) else { return Tick(woken: wake(nil), closed: closed) }
        let woken = state.withLock { state in
            var woken = 0
            var stirred = Set<StoreKey>()
            for subscriber in state.subscribers.values where subscriber.cursor < heads[subscriber.store] ?? .max {
                subscriber.continuation.yield()
                stirred.insert(subscriber.store)
                woken += 1
            }
            for store in stirred { state.generations[store, default: 0] += 1 }
            return woken
        }
        return Tick(woken: woken, closed: closed)
    }

    /// The generated key's id in a holder (`key:<id>`); nil for a key from the environment, which cannot be revoked.
    static func keyID(of holder: String) -> String? {
        holder.hasPrefix("key:") ? String(holder.dropFirst(4)) : nil
    }

    /// Ends the streams held by the generated keys `ids`; returns how many.
    func close(keysWithIDs ids: Set<String>) -> Int {
        let closing = state.withLock { state -> [Int] in
            state.subscribers.filter { Self.keyID(of: $0.value.holder).map(ids.contains) ?? false }.map(\.key)
        }
        for id in closing { unsubscribe(id) }
        if !closing.isEmpty { logger.info("streams closed: their key was revoked or expired", metadata: ["streams": "\(closing.count)"]) }
        return closing.count
    }

    /// Streams `holder` holds open now.
    public func streams(heldBy holder: String) -> Int {
        state.withLock { $0.held[holder, default: 0] }
    }

    /// Wakes the subscribers of `stores`, or all of them when `stores` is nil; returns how many.
    @discardableResult
    public func wake(_ stores: Set<StoreKey>?) -> Int {
        state.withLock { state in
            var woken = 0
            var stirred = Set<StoreKey>()
            for subscriber in state.subscribers.values where stores?.contains(subscriber.store) ?? true {
                subscriber.continuation.yield()
                stirred.insert(subscriber.store)
                woken += 1
            }
            for store in stirred { state.generations[store, default: 0] += 1 }
            return woken
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
                        try? await self.clock.sleep(for: self.sweepInterval)
                        await self.tick()
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
                state.reads = [:]
            }
            return Array(state.subscribers.values)
        }
        for subscriber in finishing { subscriber.continuation.finish() }
    }
}

/// Changes of one store encoded as Server-Sent Events, ready to write to every stream at the cursor they follow.
public struct StreamPage: Sendable {
    /// The events' text, in cursor order.
    public var events: String
    /// The cursor of the last event; nil when there was none.
    public var last: Int64?
    /// How many changes the page holds (a full page means more may follow).
    public var count: Int

    public init(events: String, last: Int64?, count: Int) {
        self.events = events
        self.last = last
        self.count = count
    }
}

extension StreamHub {
    /// The hub of `service`'s database: its change feed, and its stream reads for the tick.
    public convenience init(service: OrderService, logger: Logger) {
        self.init(changes: service.database.changes, stream: service.database.stream, clock: service.clock, logger: logger)
    }
}
