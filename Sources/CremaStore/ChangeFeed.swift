import CremaAPNsProtocol
public import CremaClock
public import CremaPostgres
import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization

/// A store whose orders changed. Store ids are unique within a tenant only, so a store is named by both.
public struct StoreKey: Hashable, Sendable {
    public var tenant: String
    public var store: String

    public init(tenant: String, store: String) {
        self.tenant = tenant
        self.store = store
    }
}

/// Which stores' orders changed: this process's order commands, and the other `crema` processes' on the same
/// database. The dashboard stream and the dispatcher subscribe to it; it is a wake-up, never the data: each
/// subscriber reads what changed itself, and its own poll or sweep covers anything missed.
///
/// - **This process.** `CremaDatabase.command` publishes the stores a command changed once its transaction has
///   committed (never after a rollback), straight to each ``subscribe(to:)`` stream whose ``Interest`` the commit
///   meets: the stream hears every commit, the dispatchers only those that queued work for them.
/// - **Other processes.** The same stores are announced with `pg_notify` on ``channel``, outside the event's
///   transaction: a NOTIFY in a transaction takes a cluster-wide lock held through its commit, which serialized
///   every event commit (docs/benchmarks.md). Announcements are coalesced: the first change after a quiet
///   `window` goes out at once, then at most one NOTIFY per `window`, naming every store changed since the
///   previous one (or none, meaning every store, when the list would not fit a payload) and the work they queued,
///   so the other processes wake only the subscribers with an interest in it. A NOTIFY that fails is dropped
///   (logged at debug): the others poll.
/// - **From other processes.** ``run()`` holds the process's one LISTEN connection (when `conninfo` is set) and
///   publishes what other processes announce, skipping its own (by a random id per feed in the payload), and
///   `.everything` when the listener (re)connects, since notifications sent meanwhile are lost.
///
/// Run it (once) as a service, before its subscribers; without `run()` it still publishes in process.
public final class ChangeFeed: Service, CustomStringConvertible, Sendable {
    /// Which of this process's commits wake a subscriber. Under ingest most events queue no push and no webhook,
    /// and each wake-up of a dispatcher costs a claim statement that finds nothing. Other processes' announcements,
    /// a reconnection and a subscriber that fell behind wake every subscriber.
    public struct Interest: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Every commit that changed an order (the dashboard stream).
        public static let orders = Interest(rawValue: 1 << 0)
        /// Commits that queued APNs pushes (the dispatcher).
        public static let pushes = Interest(rawValue: 1 << 1)
        /// Commits that queued webhook deliveries (the webhook dispatcher).
        public static let webhooks = Interest(rawValue: 1 << 2)

        /// Every kind of commit: what an announcement that does not say what it queued wakes.
        static let all: Interest = [.orders, .pushes, .webhooks]

        /// The names of the work an announcement's `queued` lists (`.orders` is every announcement, never named).
        private static let named: [(Interest, String)] = [(.pushes, "pushes"), (.webhooks, "webhooks")]

        /// This work as an announcement's `queued` names it.
        var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }

        /// The work an announcement's `queued` names, with `.orders`; a name this version does not know is ignored.
        init(names: [String]) {
            self = Self.named.filter { names.contains($0.1) }.reduce(.orders) { $0.union($1.0) }
        }
    }

    /// What a subscriber is woken with.
    public enum Change: Sendable, Hashable {
        /// Orders of these stores changed.
        case stores(Set<StoreKey>)
        /// Any order may have changed: the listener (re)connected, another process's announcement named no stores,
        /// or this subscriber fell behind.
        case everything
    }

    /// The channel of the announcements: `{"from": "<feed id>", "stores": [["<tenant>", "<store>"], …],
    /// "queued": ["pushes", "webhooks"]}`, where no `stores` means every store and no `queued` all work.
    public static let channel = "crema_order_changes"
    /// The longest payload sent with its stores. PostgreSQL refuses 8000 bytes and more; longer lists go as
    /// "every store".
    static let payloadLimit = 7_000
    /// Past this many stores not yet announced, the next announcement is "every store".
    static let unsentLimit = 1_000
    /// Changes one subscriber may have unread; past it, its oldest are dropped and an `.everything` follows.
    static let subscriberBuffer = 256

    let pool: PostgresPool
    let conninfo: String?
    let window: Duration
    let clock: CremaClock
    let logger: Logger
    /// Marks this feed's announcements, so its own listener skips them (they were published here at commit).
    let instance = UUID().uuidString.lowercased()
    private let state = Mutex(State())
    /// Rung whenever something is left to announce; `run()` waits on it.
    private let unsentSignal = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    struct Subscriber {
        var interest: Interest
        var continuation: AsyncStream<Change>.Continuation
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
        var next = 0
        /// What this process changed since its last announcement, and the work those commits queued.
        var unsent: Change?
        var unsentQueued: Interest = []
    }

    public var description: String { "ChangeFeed" }

    /// - Parameters:
    ///   - pool: Sends the announcements (one short query per window at most).
    ///   - conninfo: The LISTEN connection's; nil listens to nobody, and other processes' changes are seen at the
    ///     subscribers' next poll or sweep.
    ///   - window: The least time between two announcements.
    ///   - clock: Waits out the window; tests pass their own, to decide when a window ends.
    public init(pool: PostgresPool, conninfo: String?, window: Duration = .milliseconds(5), clock: CremaClock, logger: Logger) {
        self.pool = pool
        self.conninfo = conninfo
        self.window = window
        self.clock = clock
        self.logger = logger
    }

    /// Every change from now on that meets `interest`, until the iterating task is cancelled.
    public func subscribe(to interest: Interest) -> AsyncStream<Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: Change.self, bufferingPolicy: .bufferingNewest(Self.subscriberBuffer))
        let id = state.withLock { state in
            state.next += 1
            state.subscribers[state.next] = Subscriber(interest: interest, continuation: continuation)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Called once a command's transaction committed: wakes this process's subscribers whose interest `queued`
    /// meets, and queues the stores for the next announcement.
    func committed(_ stores: Set<StoreKey>, queued: Interest) {
        guard !stores.isEmpty else { return }
        publish(.stores(stores), to: queued.union(.orders))
        state.withLock { state in
            state.unsent = state.unsent.map { $0.adding(stores) } ?? .stores(stores)
            state.unsentQueued.formUnion(queued)
            if case .stores(let unsent) = state.unsent, unsent.count > Self.unsentLimit { state.unsent = .everything }
        }
        unsentSignal.continuation.yield()
    }

    public func run() async throws {
        let listener = conninfo.map { PostgresListener(conninfo: $0, channels: [Self.channel], logger: logger) }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let listener {
                    group.addTask {
                        for await event in listener.events() { self.received(event) }
                    }
                }
                group.addTask {
                    for await _ in self.unsentSignal.stream {
                        await self.announce()
                        do { try await self.clock.sleep(for: self.window) } catch { return }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        await listener?.shutdown()
        // What changed in the last window still goes out (at shutdown the HTTP server has stopped: nothing commits).
        await announce()
    }

    /// Wakes the subscribers whose interest meets `interest`.
    private func publish(_ change: Change, to interest: Interest = .all) {
        let subscribers = state.withLock { state in
            state.subscribers.values.filter { !$0.interest.isDisjoint(with: interest) }.map(\.continuation)
        }
        for subscriber in subscribers {
            if case .dropped = subscriber.yield(change) { subscriber.yield(.everything) }
        }
    }

    private func received(_ event: PostgresListenerEvent) {
        switch event {
        case .reconnected: publish(.everything)
        case .notification(_, let payload, _):
            if let announced = Self.change(announcedIn: payload, skipping: instance) {
                publish(announced.change, to: announced.queued)
            }
        }
    }

    /// Sends one NOTIFY with what is left to announce, if anything.
    private func announce() async {
        let unsent = state.withLock { state in
            defer { (state.unsent, state.unsentQueued) = (nil, []) }
            return state.unsent.map { ($0, state.unsentQueued) }
        }
        guard let (change, queued) = unsent else { return }
        let payload = Self.payload(announcing: change, queued: queued, from: instance)
        do {
            let statement = NotifyStatement(channel: Self.channel, payload: payload)
            try await pool.withConnection { connection in _ = try await connection.query(statement.query) }
        } catch {
            logger.debug("could not announce order changes; other processes see them when they poll", metadata: ["error": "\(error)"])
        }
    }

    /// The NOTIFY, one for every few events: its text is kept, like the event's own statements.
    private struct NotifyStatement: PostgresStatementShape {
        static let statements = PostgresStatementTable<PostgresFixedText>(limit: 1)
        var channel: String
        var payload: String

        func sql<SQL: PostgresSQL>() -> SQL { "SELECT pg_notify(\(channel), \(payload))" }
    }

    // MARK: - Payload

    struct Announcement: Codable {
        var from: String
        /// `[tenant, store]` pairs; nil for every store.
        var stores: [[String]]?
        /// The work the commits queued (`Interest.names`); nil, as from a `crema` before it, for all of it.
        var queued: [String]?

        /// Written directly, as `JSONEncoder` with `.sortedKeys` and its default escaping would write it (the encoder
        /// used to write the keys in its dictionary's order, which readers never relied on): absent optionals left out.
        var json: String {
            var writer = JSONWriter(escapingSlashes: true, capacity: 256)
            writer.beginObject()
            writer.member("from", from)
            if let queued {
                writer.key("queued")
                writer.beginArray()
                for name in queued { writer.string(name) }
                writer.endArray()
            }
            if let stores {
                writer.key("stores")
                writer.beginArray()
                for pair in stores {
                    writer.beginArray()
                    for part in pair { writer.string(part) }
                    writer.endArray()
                }
                writer.endArray()
            }
            writer.endObject()
            return writer.text
        }
    }

    /// What another process announced, and which subscribers it wakes.
    struct Announced: Equatable {
        var change: Change
        var queued: Interest
    }

    /// Each process writes an announcement up to once per `window` and reads every other's: one decoder, shared.
    private static let decoder = JSONDecoder()

    static func payload(announcing change: Change, queued: Interest, from instance: String) -> String {
        let names = queued.names
        if case .stores(let stores) = change {
            let payload = Announcement(from: instance, stores: stores.map { [$0.tenant, $0.store] }, queued: names).json
            if payload.utf8.count <= payloadLimit { return payload }
        }
        return Announcement(from: instance, stores: nil, queued: names).json
    }

    /// What a payload announces; nil when it is `instance`'s own. A payload this version cannot read (an older
    /// `crema`'s, say) wakes everything, and one that does not say what was queued wakes every subscriber.
    static func change(announcedIn payload: String, skipping instance: String) -> Announced? {
        // Most of what a process hears is its own, and its writer puts `from` first: known by its first bytes, it
        // is skipped without decoding. Anything else (another id, another spelling) is decoded and compared.
        if payload.utf8.starts(with: (#"{"from":""# + instance + #"""#).utf8) { return nil }
        guard let announcement = try? decoder.decode(Announcement.self, from: Data(payload.utf8)) else {
            return Announced(change: .everything, queued: .all)
        }
        if announcement.from == instance { return nil }
        let queued = announcement.queued.map(Interest.init(names:)) ?? .all
        guard let pairs = announcement.stores else { return Announced(change: .everything, queued: queued) }
        var stores = Set<StoreKey>()
        for pair in pairs {
            guard pair.count == 2 else { return Announced(change: .everything, queued: queued) }
            stores.insert(StoreKey(tenant: pair[0], store: pair[1]))
        }
        return Announced(change: .stores(stores), queued: queued)
    }
}

extension ChangeFeed.Change {
    func adding(_ more: Set<StoreKey>) -> Self {
        guard case .stores(let stores) = self else { return .everything }
        return .stores(stores.union(more))
    }
}

/// The stores one order command changed and the work it queued, published to the feed when (and only if) its
/// transaction commits.
final class PendingChanges: Sendable {
    private let state = Mutex<(stores: Set<StoreKey>, queued: ChangeFeed.Interest)>(([], []))

    func insert(tenant: String, store: String) {
        _ = state.withLock { $0.stores.insert(StoreKey(tenant: tenant, store: store)) }
    }

    /// Notes that the command queued pushes or webhook deliveries.
    func queued(_ work: ChangeFeed.Interest) {
        state.withLock { $0.queued.formUnion(work) }
    }

    var all: Set<StoreKey> { state.withLock { $0.stores } }
    var queued: ChangeFeed.Interest { state.withLock { $0.queued } }
}
