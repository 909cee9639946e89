import CremaCivilTime
public import CremaClock
public import CremaCore
public import CremaStore
public import Foundation

/// A store's pickup board on an APNs broadcast channel: enabled, read and disabled by the store's POS, announced on
/// by its staff, and read by customers' apps to subscribe (docs/broadcast.md). The channel is created and deleted at
/// APNs here, synchronously, so the answer says what Apple did; the broadcasts themselves go through the outbox.
public struct BroadcastService: Sendable {
    public let database: CremaDatabase
    /// APNs' channel management; nil in a process that sends no pushes (its routes answer `broadcast_unavailable`).
    public let channels: (any BroadcastChannels)?
    /// The process's one gate for POSTs outside the order commands (announcements).
    public let idempotency: IdempotencyGate
    let defaultBundleID: String?
    let clock: CremaClock
    let makeID: @Sendable () -> UUID

    public init(
        database: CremaDatabase, channels: (any BroadcastChannels)?, idempotency: IdempotencyGate, defaultBundleID: String?,
        clock: CremaClock, makeID: @escaping @Sendable () -> UUID = UUID.init
    ) {
        self.database = database
        self.channels = channels
        self.idempotency = idempotency
        self.defaultBundleID = defaultBundleID
        self.clock = clock
        self.makeID = makeID
    }

    /// The roles that put a store's board on a channel and take it off: the store's POS.
    public static let managers: Set<Role> = [.pos]
    /// The roles that announce on a store's board: its POS and its staff.
    public static let announcers: Set<Role> = [.pos, .barista]
    /// The roles that read a store's channel: the store's own keys.
    public static let readers: Set<Role> = [.pos, .barista, .dashboard]

    /// The data `principal` enables and disables channels for; `forbidden` unless its role is one of `managers`.
    public static func managerScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: managers)
    }

    /// The data `principal` announces for; `forbidden` unless its role is one of `announcers`.
    public static func announcerScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: announcers)
    }

    /// The data `principal` reads channels of; `forbidden` unless its role is one of `readers`.
    public static func readerScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: readers)
    }

    /// Puts the store's board on a channel: creates it at APNs once; the same request again answers the same channel.
    public func enable(store: String, _ request: BroadcastSettings, in scope: TenantScope) async throws -> StoreBroadcast {
        guard ["none", "latest"].contains(request.storage) else {
            throw ServiceError.invalidValue(field: "storage", reason: "must be \"none\" or \"latest\"")
        }
        let environment = request.environment ?? "production"
        guard ["sandbox", "production"].contains(environment) else {
            throw ServiceError.invalidValue(field: "environment", reason: "must be \"sandbox\" or \"production\"")
        }
        guard try await database.stores.store(id: store, in: scope) != nil else { throw StoreError.unknownStore(store) }
        if let existing = try await database.broadcasts.channel(store: store, tenant: scope.tenant) {
            try Self.check(existing, against: request)
            return try await response(existing)
        }
        guard let channels else { throw ServiceError.broadcast(.unavailable) }
        let bundleID = try await app(named: request.bundleID, tenant: scope.tenant)
        let id = try await Self.refusing { () throws(BroadcastRefusal) in
            try await channels.create(tenant: scope.tenant, bundleID: bundleID, environment: environment, storage: request.storage)
        }
        let now = clock.now
        let (kept, inserted) = try await database.broadcasts.insert(
            StoreChannelRecord(
                tenantID: scope.tenant, storeID: store, bundleID: bundleID, environment: environment, storage: request.storage,
                channelID: id, createdAt: now))
        if !inserted {
            // Another request enabled the store first: its channel stays, this one goes (or the reconciliation takes it).
            try? await channels.delete(id, tenant: scope.tenant, bundleID: bundleID, environment: environment)
            try Self.check(kept, against: request)
        } else {
            // A new channel starts with the board as it is now.
            try await database.broadcasts.queueBoard(store: store, tenant: scope.tenant, change: BoardChange(priority: 5), at: now)
        }
        return try await response(kept)
    }

    /// The store's channel and its board now.
    public func read(store: String, in scope: TenantScope) async throws -> StoreBroadcast {
        guard scope.includes(store: store), let channel = try await database.broadcasts.channel(store: store, tenant: scope.tenant) else {
            throw ServiceError.broadcast(.notEnabled)
        }
        return try await response(channel)
    }

    /// Forgets the store's channel, then deletes it at APNs. Forgotten first, so that no broadcast in flight re-creates
    /// it meanwhile; a channel APNs could not delete now is an orphan the broadcaster's reconciliation deletes.
    /// Returns whether APNs deleted it now.
    @discardableResult
    public func disable(store: String, in scope: TenantScope) async throws -> Bool {
        guard scope.includes(store: store), try await database.broadcasts.channel(store: store, tenant: scope.tenant) != nil else {
            throw ServiceError.broadcast(.notEnabled)
        }
        guard let channels else { throw ServiceError.broadcast(.unavailable) }
        guard let channel = try await database.broadcasts.delete(store: store, tenant: scope.tenant) else { throw ServiceError.broadcast(.notEnabled) }
        do {
            try await channels.delete(channel.channelID, tenant: scope.tenant, bundleID: channel.bundleID, environment: channel.environment)
            return true
        } catch {
            return false
        }
    }

    /// A repeated enable must ask for the channel the store has: its storage, and its app and environment when named.
    static func check(_ existing: StoreChannelRecord, against request: BroadcastSettings) throws(ServiceError) {
        guard existing.storage == request.storage else { throw .broadcast(.storageConflict(current: existing.storage)) }
        if let bundleID = request.bundleID, bundleID != existing.bundleID {
            throw .broadcast(.channelMismatch(field: "bundle_id", current: existing.bundleID))
        }
        if let environment = request.environment, environment != existing.environment {
            throw .broadcast(.channelMismatch(field: "environment", current: existing.environment))
        }
    }

    /// Keeps an announcement for the store's board (shown to everyone following it until `until`).
    public func announce(store: String, _ request: AnnouncementDraft, in scope: TenantScope) async throws -> StoreAnnouncement {
        // As the document and the table count: code points, before trimming; no control character anywhere.
        let message = request.message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !message.isEmpty, request.message.unicodeScalars.count <= StoreAnnouncement.maxCharacters,
            !request.message.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw ServiceError.invalidValue(
                field: "message", reason: "must be 1–\(StoreAnnouncement.maxCharacters) characters without control characters")
        }
        guard let until = RFC3339.date(request.until) else {
            throw ServiceError.invalidField(field: "until", reason: "must be an RFC 3339 date-time")
        }
        let now = clock.now
        guard until > now, until.timeIntervalSince(now) <= StoreAnnouncement.maxDuration else {
            throw ServiceError.invalidValue(field: "until", reason: "must be in the future, at most 24 hours ahead")
        }
        guard scope.includes(store: store) else { throw StoreError.unknownStore(store) }
        return try await database.broadcasts.announce(store: store, tenant: scope.tenant, id: makeID(), message: message, until: until, at: now)
    }

    /// What a customer's app subscribes with: the channel and the board's attributes and state now.
    public func customerBoard(store: String, tenant: String) async throws -> StoreBroadcast {
        guard let channel = try await database.broadcasts.channel(store: store, tenant: tenant) else {
            throw ServiceError.broadcast(.notEnabled)
        }
        return StoreBroadcast(channel: channel, board: try await self.board(store: store, tenant: tenant))
    }

    /// Keeps the customer's consent and token to have the store's board started on their device when they order
    /// there (docs/broadcast.md, "Starting the board"); `environment` nil is production.
    public func registerStartToken(store: String, token presented: String, environment: String?, customerRef: String, tenant: String) async throws {
        let token: String
        do throws(OrderError) {
            token = try PushTokenValidation.normalized(presented, field: "token")
        } catch {
            throw StoreError.rejected(error)
        }
        let environment = environment ?? "production"
        guard ["sandbox", "production"].contains(environment) else {
            throw ServiceError.invalidValue(field: "environment", reason: "must be \"sandbox\" or \"production\"")
        }
        guard let channel = try await database.broadcasts.channel(store: store, tenant: tenant) else { throw ServiceError.broadcast(.notEnabled) }
        // A token of the other environment could never be started on this channel: refused now, not retried forever.
        guard channel.environment == environment else {
            throw ServiceError.invalidValue(field: "environment", reason: "must be the store's channel's, \"\(channel.environment)\"")
        }
        try await database.broadcasts.registerStartToken(
            store: store, tenant: tenant, customerRef: customerRef, token: token, environment: environment, at: clock.now)
    }

    /// Withdraws that consent; false when there was none.
    public func removeStartToken(store: String, customerRef: String, tenant: String) async throws -> Bool {
        try await database.broadcasts.removeStartToken(store: store, tenant: tenant, customerRef: customerRef)
    }

    /// The store's board now, as a broadcast would carry it.
    public func board(store: String, tenant: String) async throws -> StoreBoard {
        let now = clock.now
        guard let inputs = try await database.broadcasts.board(store: store, tenant: tenant, now: now) else {
            throw StoreError.unknownStore(store)
        }
        return StoreBoard(store: store, inputs: inputs, now: now)
    }

    private func response(_ channel: StoreChannelRecord) async throws -> StoreBroadcast {
        StoreBroadcast(channel: channel, board: try await board(store: channel.storeID, tenant: channel.tenantID))
    }

    /// The app whose channel this is: the one named, or the tenant's only app (the configured one for `default`).
    private func app(named bundleID: String?, tenant: String) async throws -> String {
        let apps = try await database.tenants.apps(tenant: tenant).map(\.bundleID).sorted()
        if let bundleID {
            guard apps.contains(bundleID) || (tenant == TenantScope.defaultTenantName && bundleID == defaultBundleID) else {
                throw ServiceError.unknownApp(bundleID)
            }
            return bundleID
        }
        if apps.count == 1 { return apps[0] }
        if apps.isEmpty, tenant == TenantScope.defaultTenantName, let defaultBundleID { return defaultBundleID }
        if apps.isEmpty { throw StoreError.appRequired }
        throw ServiceError.broadcast(.bundleRequired(apps))
    }

    private static func refusing<T>(_ body: () async throws(BroadcastRefusal) -> T) async throws(ServiceError) -> T {
        do { return try await body() } catch { throw .broadcast(error) }
    }
}
