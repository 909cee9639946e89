public import CremaStore
public import CremaCore
public import Foundation

/// What a store's keys read of its orders. Who may read is said here, beside the commands' own rule
/// (`OrderEventType.permittedRoles`), and the scope a caller holds bounds every read: an order, a store or a board
/// outside it reads as one that does not exist.
extension OrderService {
    /// The roles that read a store's orders, its board and an order's deliveries and preview: the store's own keys,
    /// never a customer's app (which reads its own orders under `/v1/me`).
    public static let orderReaders: Set<Role> = [.pos, .barista, .dashboard]

    /// The data `principal` reads of orders, boards, deliveries and previews: its scope when its role is one of
    /// `orderReaders`; `forbidden` for another role and for the bootstrap admin key. Every read below is then bounded
    /// by that scope, so another tenant's or store's order reads as one that does not exist.
    public static func readerScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: orderReaders)
    }

    /// The largest page `orders(store:in:state:limit:cursor:)` returns.
    public static let maxPageSize = OrderRepository.maxPageSize

    /// The order with its events and stored projection; nil when no order with this id is in `scope`.
    public func order(id: UUID, in scope: TenantScope) async throws(StoreError) -> OrderDetail? {
        try await database.orders.order(id: id, in: scope)
    }

    /// One page of a store's orders, newest first, optionally in one state.
    public func orders(store: String, in scope: TenantScope, state: OrderState?, limit: Int, cursor: String?) async throws(StoreError) -> OrderPage {
        try await database.orders.orders(store: store, in: scope, state: state, limit: limit, cursor: cursor)
    }

    /// The store with this id in `scope`; nil when there is none.
    public func store(id: String, in scope: TenantScope) async throws(StoreError) -> Store? {
        try await database.stores.store(id: id, in: scope)
    }

    /// A store's open orders by state.
    public func board(store: String, in scope: TenantScope) async throws(StoreError) -> Board {
        try await database.orders.board(store: store, in: scope)
    }

    /// Every delivery decision for the order, skips included; nil when no order with this id is in `scope`.
    public func deliveries(orderID: UUID, in scope: TenantScope) async throws -> [DeliveryLogEntry]? {
        try await database.deliveries.log(orderID: orderID, in: scope)
    }

    /// Creates or renames stores with the rules every caller shares.
    public var stores: StoreService { StoreService(stores: database.stores) }
}
