public import CremaStore
public import CremaCore
public import Foundation

/// The dashboard stream's reads (docs/design.md §9): a store's head, its changes after a cursor, and the one-time
/// tickets a browser opens a stream with.
extension OrderService {
    /// The most changes one read returns; a full page means more may follow.
    public static let streamPageSize = StreamRepository.streamPageSize

    /// The roles that open a store's stream and issue its tickets: the dashboard's key alone.
    public static let streamReaders: Set<Role> = [.dashboard]

    /// The data `principal` streams: its scope when its role is one of `streamReaders`; `forbidden` otherwise.
    public static func streamScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: streamReaders)
    }

    /// The cursor of the store's latest change; `unknownStore` for a store outside `scope`.
    public func streamHead(store: String, in scope: TenantScope) async throws(StoreError) -> Int64 {
        try await database.stream.streamHead(store: store, in: scope)
    }

    /// The store's changes after `cursor`, at most `streamPageSize`, in cursor order.
    public func streamChanges(store: String, tenant: String, after cursor: Int64) async throws(StoreError) -> [StreamChange] {
        try await database.stream.streamChanges(store: store, tenant: tenant, after: cursor)
    }

    /// Keeps a ticket that opens `store`'s stream once within `lifetime` seconds, counted against `holder`; returns its expiry.
    public func issueStreamTicket(
        _ ticket: StreamTicket, store: String, in scope: TenantScope, holder: String, lifetime: TimeInterval
    ) async throws(StoreError) -> Date {
        try await database.stream.issueStreamTicket(ticket, store: store, in: scope, holder: holder, lifetime: lifetime)
    }

    /// Uses up a ticket issued for `store`; nil when it is unknown, used, expired or for another store.
    public func redeemStreamTicket(_ ticket: StreamTicket, store: String) async throws(StoreError) -> RedeemedStreamTicket? {
        try await database.stream.redeemStreamTicket(ticket, store: store)
    }
}
