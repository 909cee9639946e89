import CremaAPI
import CremaAPNsKey
public import CremaAPNs
import CremaAPNsProtocol
public import CremaClock
public import CremaCore
public import CremaService
import CremaStore
import Foundation
public import Logging
public import Prometheus
public import ServiceLifecycle

/// Broadcasts stores' boards on their channels (docs/broadcast.md): claims the boards whose settle time has come
/// (one row per store however many changes it stands for), projects each from the store's orders at sending time,
/// sends it to APNs' broadcast route, and removes it only when no change arrived meanwhile. At least once, like the
/// per-device outbox: a crash mid-send leaves the row to be claimed again after its lease.
///
/// It also keeps Crema's channels and Apple's in step: a channel APNs no longer knows (`ChannelNotRegistered` on a
/// send, or missing from `all-channels`) is re-created and reported; a channel APNs has that no store uses is deleted.
public struct BroadcastDispatcher: Service, CustomStringConvertible {
    let service: BroadcastService
    let channels: APNsBroadcastChannels
    let client: APNsClient
    let keyring: SigningKeyring
    let configuration: Configuration
    let clock: CremaClock
    let logger: Logger
    let metrics: BroadcastMetrics
    /// The channels the last reconciliation found no store using: deleted if the next one finds the same.
    let orphanSuspects = OrphanSuspects()

    /// How the broadcaster paces itself.
    public struct Configuration: Sendable {
        /// How often it looks for boards due (a board waits `BoardChange.settleSeconds` after its first change anyway).
        public var pollInterval: Duration = .milliseconds(250)
        /// Boards claimed at once; each is sent in its own task.
        public var batchSize = 16
        /// How long a claimed board is this process's before another may take it.
        public var leaseSeconds: Double = 30
        /// How often channels are compared with APNs' `all-channels`.
        public var reconcileInterval: Duration = .seconds(600)
        /// Backoff for boards APNs asked to wait for or could not take.
        public var retry = RetryPolicy(base: 1, cap: 60, maxAttempts: 8)

        public init() {}
    }

    public var description: String { "BroadcastDispatcher" }

    public init(
        service: BroadcastService, channels: APNsBroadcastChannels, client: APNsClient, keyring: SigningKeyring, configuration: Configuration = .init(),
        clock: CremaClock, registry: PrometheusCollectorRegistry, logger: Logger
    ) {
        self.service = service
        self.channels = channels
        self.client = client
        self.keyring = keyring
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.metrics = BroadcastMetrics(registry: registry)
    }

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.reconcileLoop() }
            group.addTask {
                await cancelWhenGracefulShutdown { await self.sendLoop() }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Claims due boards and sends them until cancelled; a failing claim is logged and tried again. Sleeps a poll
    /// interval unless some tenant had a whole batch due (it may have more).
    func sendLoop() async {
        while !Task.isCancelled {
            var claimedAll = false
            do {
                claimedAll = try await sendDueRound().claimedAll
            } catch {
                logger.warning("could not claim boards to broadcast; trying again", metadata: ["error": "\(error)"])
            }
            if !claimedAll { try? await clock.sleep(for: configuration.pollInterval) }
        }
    }

    /// One round: each tenant with boards due now claims up to a batch (one claim per tenant, so one tenant's boards
    /// take none of another's batch), and all of them are sent, one task each; returns how many it claimed.
    @discardableResult
    public func sendDue() async throws -> Int {
        try await sendDueRound().claimed
    }

    /// One round of `sendDue()`, saying also whether a tenant's claim took a whole batch.
    private func sendDueRound() async throws -> (claimed: Int, claimedAll: Bool) {
        let now = clock.now
        var due: [DueBroadcast] = []
        var claimedAll = false
        for tenant in try await service.database.broadcasts.tenantsWithDueBoards(now: now) {
            let claimed = try await service.database.broadcasts.claim(
                for: tenant, limit: configuration.batchSize, lease: configuration.leaseSeconds, now: now)
            due += claimed
            claimedAll = claimedAll || claimed.count == configuration.batchSize
        }
        // All tenants' boards at once: a slow answer for one tenant holds none of the others'.
        await withTaskGroup(of: Void.self) { group in
            for board in due { group.addTask { await self.send(board) } }
        }
        return (due.count, claimedAll)
    }

    /// Sends one store's board and records what APNs said; never throws, so one bad board stops nothing else.
    func send(_ due: DueBroadcast) async {
        let channel = due.channel
        let now = clock.now
        do {
            guard let key = keyring.key(for: channel.bundleID, tenant: channel.tenantID) else {
                try await service.database.broadcasts.retry(due, at: now.addingTimeInterval(60), error: "no APNs key for \(channel.bundleID) here")
                return
            }
            let board = try await service.board(store: channel.storeID, tenant: channel.tenantID)
            let request = APNsBroadcastRequest(
                channelID: channel.channelID, environment: APNsEnvironment(rawValue: channel.environment) ?? .production,
                bundleID: channel.bundleID, priority: due.priority,
                // A channel that stores nothing takes only 0 (try once); one that keeps the latest keeps it until the board goes stale.
                expiration: channel.storage == "none" ? nil : now.addingTimeInterval(BoardBroadcastBody.staleAfter),
                requestID: UUID(), body: board.body.json)
            let response: APNsResponse
            do {
                response = try await client.broadcast(request, signedBy: key)
            } catch {
                metrics.broadcast(outcome: "retry")
                try await retry(due, now: now, retryAfter: nil, error: error.code)
                return
            }
            switch response.broadcastDisposition {
            case .accepted:
                metrics.broadcast(outcome: "sent")
                try await service.database.broadcasts.finish(due, status: response.status, reason: nil, sent: true, at: now)
                // An announcement that ends changes the board with no order changing: it goes again then.
                if let changesAt = board.changesAt {
                    try await service.database.broadcasts.queueBoard(store: channel.storeID, tenant: channel.tenantID, due: changesAt)
                }
                await startBoards(on: channel, board, key: key, now: now)
            case .channelGone:
                metrics.broadcast(outcome: "channel_gone")
                try await recreate(channel, because: response.reason ?? "ChannelNotRegistered")
                // The board goes out again at once, on the new channel.
                try await service.database.broadcasts.retry(due, at: now, error: response.reason ?? "ChannelNotRegistered")
            case .retryLater(let after):
                metrics.broadcast(outcome: "retry")
                try await retry(due, now: now, retryAfter: after, error: response.reason ?? "HTTP \(response.status)")
            case .configurationError, .channelLimit:
                // Retrying will not fix it (the capability is off, a bad key): the board is dropped and the channel says why;
                // the next change queues it again.
                metrics.broadcast(outcome: "refused")
                logger.error(
                    "APNs refused a broadcast",
                    metadata: [
                        "store": "\(channel.storeID)", "tenant": "\(channel.tenantID)", "apns.status": "\(response.status)",
                        "apns.reason": "\(response.reason ?? "")",
                    ])
                try await service.database.broadcasts.finish(due, status: response.status, reason: response.reason, sent: false, at: now)
            }
        } catch {
            logger.warning("broadcast not recorded; its lease will bring it back", metadata: ["store": "\(channel.storeID)", "error": "\(error)"])
        }
    }

    /// Starts the board on the devices of customers who asked for it (a push-to-start token registered for the store)
    /// and ordered there since it was last started for them: a push-to-start onto the channel, with the board just
    /// broadcast. A start that fails is tried again with the store's next broadcast; a dead token is retired.
    func startBoards(on channel: StoreChannelRecord, _ board: StoreBoard, key: APNsSigningKey, now: Date) async {
        let starts: [BoardStart]
        do {
            starts = try await service.database.broadcasts.dueStarts(store: channel.storeID, tenant: channel.tenantID)
        } catch {
            logger.warning("could not read the boards to start; the next broadcast tries again", metadata: ["store": "\(channel.storeID)", "error": "\(error)"])
            return
        }
        guard !starts.isEmpty else { return }
        let body = BoardBroadcastBody.start(
            board.board.state, attributes: board.board.attributes, channelID: channel.channelID,
            staleDate: now.addingTimeInterval(BoardBroadcastBody.staleAfter))
        await withTaskGroup(of: Void.self) { group in
            for start in starts {
                group.addTask {
                    let request = APNsRequest(
                        deviceToken: start.token, environment: APNsEnvironment(rawValue: start.environment) ?? .production, pushType: .liveactivity,
                        topic: APNsPushType.liveactivity.topic(bundleID: channel.bundleID), priority: 10,
                        collapseID: StartCollapseID.board(store: channel.storeID, customerRef: start.customerRef), body: body.json)
                    let retired: String?
                    do {
                        let response = try await client.send(request, signedBy: key)
                        switch response.disposition {
                        case .delivered: retired = nil
                        // Gone, or a start APNs will never take (e.g. a token of another topic): retired, not resent forever.
                        case .retireToken, .deadLetter: retired = response.reason ?? "HTTP \(response.status)"
                        case .retry, .refreshProviderToken, .signingKeyRejected:
                            metrics.start(outcome: "retry")
                            return
                        }
                    } catch {
                        metrics.start(outcome: "retry")
                        return
                    }
                    metrics.start(outcome: retired == nil ? "sent" : "retired")
                    do {
                        try await service.database.broadcasts.finishStart(
                            start, store: channel.storeID, tenant: channel.tenantID, retiredBecause: retired, at: now)
                    } catch {
                        logger.warning("board start not recorded; it may be sent again", metadata: ["store": "\(channel.storeID)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    private func retry(_ due: DueBroadcast, now: Date, retryAfter: Double?, error: String) async throws {
        // Past the policy's attempts the board keeps trying at its longest interval (a board is never dead: the next
        // change wants it out), still no sooner than APNs asked.
        let delay = configuration.retry.delay(afterAttempt: due.attempts, retryAfter: retryAfter, random: Double.random(in: 0..<1))
            ?? max(configuration.retry.cap, retryAfter ?? 0)
        try await service.database.broadcasts.retry(due, at: now.addingTimeInterval(delay), error: error)
    }

    /// Makes a new channel in place of one APNs forgot, and says so: subscribers of the old id must fetch the new one.
    func recreate(_ channel: StoreChannelRecord, because reason: String) async throws {
        let id = try await channels.create(
            tenant: channel.tenantID, bundleID: channel.bundleID, environment: channel.environment, storage: channel.storage)
        guard try await service.database.broadcasts.replace(
            store: channel.storeID, tenant: channel.tenantID, old: channel.channelID, new: id, at: clock.now) != nil
        else {
            // Disabled or replaced meanwhile: the new channel is nobody's.
            try? await channels.delete(id, tenant: channel.tenantID, bundleID: channel.bundleID, environment: channel.environment)
            return
        }
        metrics.recreated()
        logger.warning(
            "APNs forgot a store's broadcast channel; created a new one",
            metadata: ["store": "\(channel.storeID)", "tenant": "\(channel.tenantID)", "reason": "\(reason)", "channel": "\(id.prefix(8))…"])
    }

    func reconcileLoop() async {
        while !Task.isCancelled {
            do {
                try await reconcile()
            } catch {
                logger.warning("could not compare broadcast channels with APNs; trying again later", metadata: ["error": "\(error)"])
            }
            do { try await clock.sleep(for: configuration.reconcileInterval) } catch { return }
        }
    }

    /// Compares each app's channels with APNs' list: re-creates the ones APNs forgot, deletes the ones no store uses.
    /// A channel is taken for an orphan only when two passes in a row found no store using it, and for forgotten only
    /// when it was kept before APNs was asked: so a channel being created or re-created while a pass runs is neither.
    /// At most `perPass` of each; an app whose calls fail is skipped, not the pass. Returns how many of each.
    @discardableResult
    public func reconcile() async throws -> (recreated: Int, deleted: Int) {
        var recreated = 0
        var deleted = 0
        var suspects: Set<String> = []
        for app in try await service.database.broadcasts.channelApps() {
            guard keyring.key(for: app.bundleID, tenant: app.tenant) != nil else { continue }
            do {
                let listedAt = clock.now
                let atAPNs = Set(try await channels.list(tenant: app.tenant, bundleID: app.bundleID, environment: app.environment))
                let kept = try await service.database.broadcasts.channels(bundleID: app.bundleID, environment: app.environment)
                let forgotten = kept.filter { channel in
                    channel.tenantID == app.tenant && !atAPNs.contains(channel.channelID) && (channel.recreatedAt ?? channel.createdAt) < listedAt
                }
                for channel in forgotten.prefix(Self.perPass) {
                    try await recreate(channel, because: "missing from all-channels")
                    try await service.database.broadcasts.queueBoard(
                        store: channel.storeID, tenant: channel.tenantID, change: BoardChange(priority: 5), at: clock.now)
                    recreated += 1
                }
                let unused = atAPNs.subtracting(kept.map(\.channelID))
                suspects.formUnion(unused)
                for orphan in unused.intersection(orphanSuspects.previous).sorted().prefix(Self.perPass) {
                    try await channels.delete(orphan, tenant: app.tenant, bundleID: app.bundleID, environment: app.environment)
                    deleted += 1
                }
            } catch {
                logger.warning(
                    "could not reconcile an app's broadcast channels with APNs; the next pass tries again",
                    metadata: ["tenant": "\(app.tenant)", "bundle_id": "\(app.bundleID)", "error": "\(error)"])
            }
        }
        orphanSuspects.replace(with: suspects)
        if recreated + deleted > 0 {
            logger.notice("broadcast channels reconciled with APNs", metadata: ["recreated": "\(recreated)", "deleted_orphans": "\(deleted)"])
        }
        return (recreated, deleted)
    }

    /// The most channels one pass re-creates, and the most it deletes.
    static var perPass: Int { 100 }
}
