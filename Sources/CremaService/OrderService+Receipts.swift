import CremaClock
public import CremaCore
public import CremaStore
public import Foundation

extension OrderService {
    /// The most receipts one `POST /v1/me/receipts` may carry.
    public static let receiptsPerRequest = 100

    /// One receipt as the app posts it: the opaque string from the push, how the app saw the push, and when.
    public struct ReceiptPost: Sendable, Hashable {
        public var receipt: String
        public var surface: ReceiptSurface
        public var at: Date

        public init(receipt: String, surface: ReceiptSurface, at: Date) {
            self.receipt = receipt
            self.surface = surface
            self.at = at
        }
    }

    /// Records the receipts a customer's phone posted: each one this deployment made for a delivery of this customer is
    /// accepted (the first per delivery kept, repeats ignored); any other (another tenant's or customer's, altered, the
    /// placeholder of a deployment without `CREMA_MASTER_KEY`) is unknown and writes nothing.
    public func recordReceipts(
        _ posts: [ReceiptPost], customerRef: String, tenant: String
    ) async throws(StoreError) -> (accepted: Int, unknown: Int) {
        let opened = posts.compactMap { post -> PostedReceipt? in
            guard let receipt = receiptKey?.open(post.receipt, tenant: tenant) else { return nil }
            return PostedReceipt(deliveryID: receipt.deliveryID, orderID: receipt.orderID, surface: post.surface, at: post.at)
        }
        let recording = try await database.receipts.record(opened, customerRef: customerRef, tenant: tenant)
        if !recording.recorded.isEmpty { onReceipts(recording.recorded) }
        return (recording.known, posts.count - recording.known)
    }

    /// The inferred receipt of a widget push: the customer's widget asked for its data now. Called by `GET /v1/me/widget`.
    public func widgetFetched(customerRef: String, tenant: String) async throws(StoreError) {
        let recorded = try await database.receipts.inferWidgets(tenant: tenant, customerRef: customerRef, at: clock.now)
        if !recorded.isEmpty { onReceipts(recorded) }
    }
}

extension OrderService {
    /// Who may read a store's funnel: the shop's systems and its dashboard (not the barista's terminal).
    public static let funnelReaders: Set<Role> = [.pos, .dashboard]

    /// The data `principal` reads of funnels: its scope when its role is one of `funnelReaders`; `forbidden` for
    /// another role and for the bootstrap admin key, as `readerScope(of:)` says for orders.
    public static func funnelScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: funnelReaders)
    }

    /// How far back a funnel looks at most: the outbox keeps finished pushes 72 hours (`DispatcherConfiguration.retention`),
    /// so an earlier `since` would count a partial, shrinking past; and no call reads more than that of a store's pushes.
    public static let funnelWindow: TimeInterval = 72 * 3600

    /// A store's delivery funnel since `since` (docs/delivery.md "Receipts and the funnel"), from no earlier than
    /// `funnelWindow` before now and no later than now (the answer's `since` says which); `unknownStore` for a store
    /// outside the caller's scope, as every read of a store answers.
    public func funnel(store: String, since: Date, in scope: TenantScope) async throws(StoreError) -> PushFunnel {
        guard scope.includes(store: store) else { throw .unknownStore(store) }
        let now = clock.now
        let since = min(max(since, now.addingTimeInterval(-Self.funnelWindow)), now)
        return try await database.receipts.funnel(store: store, since: since, in: scope)
    }
}
