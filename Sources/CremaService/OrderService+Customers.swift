public import CremaStore
import CremaClock
public import CremaAPNsProtocol
public import CremaCore
public import Foundation

/// The customer's side of the store: their tokens, their own orders (scoped by their tenant and `customer_ref`, so
/// another customer's order reads as one that does not exist) and their erasure.
extension OrderService {
    /// The roles that register and retire tokens for orders and customers under `/v1/orders/{id}/activity-token` and
    /// `/v1/customers`: the brand's app backend (a customer's own app uses `/v1/me`, with its customer token).
    public static let tokenRegistrars: Set<Role> = [.app]

    /// The data `principal` registers tokens in; `forbidden` unless its role is one of `tokenRegistrars`.
    public static func tokenScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: tokenRegistrars)
    }

    /// Registers (or refreshes) the Live Activity token of an order in `scope`; `customerRef` binds it to the customer
    /// who owns the order (`/v1/me`), nil for the app key's registration.
    public func putActivityToken(
        orderID: UUID, in scope: TenantScope, token: String, environment: APNsEnvironment, bundleID: String?,
        customerRef: String? = nil, frequentUpdates: Bool
    ) async throws(StoreError) -> RegisteredToken {
        let registered = try await database.tokens.putActivityToken(
            orderID: orderID, in: scope, token: token, environment: environment, bundleID: tokenApp(bundleID, tenant: scope.tenant),
            customerRef: customerRef, frequentUpdates: frequentUpdates)
        // The registration is the receipt of this order's push-to-start: the activity it started is running (inferred).
        let recorded = try await database.receipts.inferStarts(tenant: scope.tenant, orderID: orderID, at: clock.now)
        if !recorded.isEmpty { onReceipts(recorded) }
        return registered
    }

    /// Retires an order's Live Activity token; false when the order in `scope` has none.
    public func deleteActivityToken(orderID: UUID, in scope: TenantScope) async throws(StoreError) -> Bool {
        try await database.tokens.deleteActivityToken(orderID: orderID, in: scope)
    }

    /// Retires one of a customer's alert, widget or push-to-start tokens; false when they have no such token.
    public func deleteCustomerToken(customerRef: String, tenant: String, kind: PushTargetKind, token: String) async throws(StoreError) -> Bool {
        try await database.tokens.deleteCustomerToken(customerRef: customerRef, tenant: tenant, kind: kind, token: token)
    }

    /// The customer's orders with their stored projections.
    public func customerOrders(customerRef: String, tenant: String) async throws(StoreError) -> [CustomerOrder] {
        try await database.customers.orders(customerRef: customerRef, tenant: tenant)
    }

    /// One of the customer's orders with the last Live Activity push APNs accepted for it and its activity's
    /// frequent-updates setting; nil when no order with this id belongs to the customer.
    public func customerOrder(
        customerRef: String, tenant: String, id: UUID
    ) async throws(StoreError) -> (order: CustomerOrder, push: DeliveredActivityPush?, frequentUpdates: Bool?)? {
        try await database.customers.order(customerRef: customerRef, tenant: tenant, id: id)
    }

    /// The customer's open orders with their stores' places, for relevance.
    public func relevantOrders(customerRef: String, tenant: String) async throws(StoreError) -> [RelevantOrder] {
        try await database.customers.relevantOrders(customerRef: customerRef, tenant: tenant)
    }

    /// The tenant an erasure by `principal` acts in: a POS key's own (only a key for every store: erasure reaches them
    /// all), an admin key's own, or `default` for the bootstrap admin key. Other roles may not erase.
    public static func erasureTenant(of principal: APIPrincipal) throws(ServiceError) -> String {
        switch principal.role {
        case .pos:
            guard let scope = principal.scope else { throw .forbidden(role: principal.role, allowed: [.pos, .admin]) }
            guard scope.stores == nil else { throw .erasureNeedsWholeTenant }
            return scope.tenant
        case .admin:
            return principal.tenant ?? TenantScope.defaultTenantName
        case .barista, .dashboard, .app, .system:
            throw .forbidden(role: principal.role, allowed: [.pos, .admin])
        }
    }

    /// Erases one customer of `tenant` everywhere at once (docs/data-lifecycle.md); nil when nothing of theirs is kept.
    public func erase(customerRef: String, tenant: String) async throws(StoreError) -> ErasureCounts? {
        try await database.lifecycle.erase(customerRef: customerRef, tenant: tenant, now: clock.now)
    }
}
