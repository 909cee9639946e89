import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaService
import CremaStore
import CremaTestSupport
import Foundation

/// Shared set-up for store tests: a store, a placement and request identities.
enum StoreFixtures {
    static func placement(store: String = "market-st", posRef: String = "T-1") -> OrderPlacement {
        OrderPlacement(
            storeID: store, posRef: posRef, customerRef: "c-9", displayName: "Ana", locale: "es",
            items: [OrderItem(name: "Oat latte", size: "grande", modifiers: ["extra shot"])],
            eta: Date().addingTimeInterval(300))
    }

    static func request(_ key: String = UUID().uuidString, path: String = "POST /v1/orders", body: String = "{}", scope: String = "pos")
        -> IdempotentRequest
    {
        IdempotentRequest(scope: scope, key: key, path: path, body: body)
    }

    static func store(in db: TestDatabase, id: String = "market-st", changes: ChangeFeed? = nil) async throws -> OrderService {
        let store = OrderService(database: CremaDatabase(pool: db.pool, changes: changes, clock: .system), clock: .system)
        _ = try await store.database.stores.put(id: id, name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
        return store
    }

    static func orderID(_ response: CommandResponse) throws -> UUID {
        struct Body: Decodable { var id: UUID }
        return try JSONDecoder().decode(Body.self, from: Data(response.body.utf8)).id
    }
}
