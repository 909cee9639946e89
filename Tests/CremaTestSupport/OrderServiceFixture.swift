public import CremaCore
public import CremaService
import CremaStore
public import Foundation

/// Orders placed and moved on through the real `OrderService` (idempotent requests with fresh keys), for suites
/// that test what happens around an order rather than the HTTP that carries it.
public enum OrderServiceFixture {
    public static func placement(customer: String, name: String, eta: Date) -> OrderPlacement {
        OrderPlacement(
            storeID: "market-st", posRef: "T-1", customerRef: customer, displayName: name, locale: "en",
            items: [OrderItem(name: "Oat latte", quantity: 2)], eta: eta)
    }

    public static func place(_ service: OrderService, customer: String = "c-9", name: String = "Ana", at clock: TestClock) async throws -> UUID {
        let placed = try await service.place(
            placement(customer: customer, name: name, eta: clock.now.addingTimeInterval(600)), in: .default, role: .pos,
            request: IdempotentRequest(scope: "pos", key: UUID().uuidString, path: "POST /v1/orders", body: "{}"))
        struct Body: Decodable { var id: UUID }
        return try JSONDecoder().decode(Body.self, from: Data(placed.body.utf8)).id
    }

    public static func apply(_ service: OrderService, _ event: OrderEvent, to id: UUID, as role: Role = .barista) async throws {
        _ = try await service.apply(
            event, to: id, in: .default, expectedVersion: nil, role: role,
            request: IdempotentRequest(scope: role.rawValue, key: UUID().uuidString, path: "POST /v1/orders/\(id)/events", body: "{}"))
    }
}
