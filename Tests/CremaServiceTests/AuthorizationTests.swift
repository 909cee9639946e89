import CremaCore
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// Who may read or write what is the service's rule: a key's role is checked against the set the service names
/// (`forbidden`, with the roles that may, for any other), and the scope it then reads in bounds every read, so another
/// tenant's or store's order reads as one that does not exist.
@Suite struct AuthorizationTests {
    static let storeKeys: Set<Role> = [.pos, .barista, .dashboard]

    /// The refusal a check throws for `principal`, or nil when it lets it through.
    static func refusal(_ check: (APIPrincipal) throws(ServiceError) -> TenantScope, _ principal: APIPrincipal) -> ServiceError? {
        do {
            _ = try check(principal)
            return nil
        } catch {
            return error
        }
    }

    @Test("each role outside a read's or a write's set is refused with the code forbidden, naming the roles that may")
    func eachRoleOutsideAReadsOrAWritesSetIsRefusedWithTheCodeForbidden() {
        let checks: [(name: String, check: (APIPrincipal) throws(ServiceError) -> TenantScope, allowed: Set<Role>)] = [
            ("orders", OrderService.readerScope(of:), Self.storeKeys),
            ("stream", OrderService.streamScope(of:), [.dashboard]),
            ("broadcast read", BroadcastService.readerScope(of:), Self.storeKeys),
            ("broadcast manage", BroadcastService.managerScope(of:), [.pos]),
            ("announce", BroadcastService.announcerScope(of:), [.pos, .barista]),
            ("order events", OrderService.eventSenderScope(of:), [.pos, .barista]),
            ("tokens", OrderService.tokenScope(of:), [.app]),
            ("store writes", StoreService.writerScope(of:), [.pos]),
            ("funnel", OrderService.funnelScope(of:), [.pos, .dashboard]),
        ]
        for (name, check, allowed) in checks {
            for role in Role.allCases {
                let principal = APIPrincipal(role: role, tenant: "harbor", stores: ["pier-1"])
                let refusal = Self.refusal(check, principal)
                if allowed.contains(role) {
                    #expect(refusal == nil, "\(name): \(role)")
                    #expect((try? check(principal)) == TenantScope(tenant: "harbor", stores: ["pier-1"]), "\(name): \(role)")
                } else {
                    #expect(refusal == .forbidden(role: role, allowed: allowed), "\(name): \(role)")
                    #expect(refusal?.code == "forbidden", "\(name): \(role)")
                }
            }
        }
    }

    @Test("the bootstrap admin key, which belongs to no tenant, reads no store's orders")
    func theBootstrapAdminKeyReadsNoStoresOrders() {
        let bootstrap = APIPrincipal(role: .admin, tenant: nil)
        #expect(Self.refusal(OrderService.readerScope(of:), bootstrap) == .forbidden(role: .admin, allowed: Self.storeKeys))
        #expect(Self.refusal(BroadcastService.readerScope(of:), bootstrap)?.code == "forbidden")
    }

    @Test("an order read with another tenant's key or a key for other stores reads as one that does not exist")
    func anOrderReadWithAnotherTenantsKeyReadsAsOneThatDoesNotExist() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date(timeIntervalSince1970: 1_795_000_000))
            let service = OrderService(database: CremaDatabase(pool: db.pool, clock: clock.crema), clock: clock.crema)
            _ = try await service.database.tenants.put(id: "harbor", name: "Harbor")
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            let id = try await OrderServiceFixture.place(service, at: clock)

            let own = try OrderService.readerScope(of: APIPrincipal(role: .barista, tenant: "default"))
            #expect(try await service.order(id: id, in: own)?.order.id == id)
            #expect(try await service.deliveries(orderID: id, in: own) != nil)

            let otherTenant = try OrderService.readerScope(of: APIPrincipal(role: .pos, tenant: "harbor"))
            #expect(try await service.order(id: id, in: otherTenant) == nil)
            #expect(try await service.deliveries(orderID: id, in: otherTenant) == nil)

            let otherStore = try OrderService.readerScope(of: APIPrincipal(role: .dashboard, tenant: "default", stores: ["pier-1"]))
            #expect(try await service.order(id: id, in: otherStore) == nil)
            #expect(try await service.deliveries(orderID: id, in: otherStore) == nil)
        }
    }
}
