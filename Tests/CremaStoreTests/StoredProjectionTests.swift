import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// The projection an order command stores is the one its Live Activity pushes carry: projected once per command
/// (`DeliveryPlan.projection`), so `GET /v1/orders/{id}` and the device never disagree.
@Suite(.timeLimit(.minutes(2))) struct StoredProjectionTests {
    /// A Live Activity push body, read as ActivityKit reads its `content-state`.
    struct PushBody: Decodable {
        struct APS: Decodable {
            var contentState: OrderActivityAttributes.ContentState
            enum CodingKeys: String, CodingKey { case contentState = "content-state" }
        }
        var aps: APS
    }

    /// The order's stored projection and the `content-state` of the Live Activity push planned at `version`.
    func projections(_ db: TestDatabase, order: UUID, version: Int) async throws -> (stored: String, pushed: [String]) {
        let stored = try await db.scalar("SELECT projection::text FROM orders WHERE order_id = \(order)", as: String.self)
        let pushed = try await db.pool.withConnection { connection in
            try await connection.query(
                """
                SELECT body FROM delivery_outbox
                WHERE order_id = \(order) AND order_version = \(version) AND push_type = 'liveactivity' AND body IS NOT NULL
                """
            ).map { row in try row.decode("body", as: String.self) }
        }
        return (stored, pushed)
    }

    @Test("the stored projection is the content state the planner put in the Live Activity push, for every event type")
    func theStoredProjectionIsThePushedOne() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            // The customer's push-to-start token: each placement's push is a start, which carries the state too.
            _ = try await store.database.tokens.putCustomerToken(
                customerRef: "c-9", tenant: "default", kind: .pushToStart, token: String(repeating: "cd", count: 40), environment: .production,
                bundleID: nil, replaces: nil, limit: 20)
            let walks: [[(OrderEvent, Role)]] = [
                [
                    (.started(barista: "Sam"), .barista), (.delayed(eta: Date().addingTimeInterval(1_800), reason: "milk delivery"), .barista),
                    (.ready(pickupPoint: "counter"), .barista), (.pickedUp, .pos),
                ],
                [(.canceled(reason: "left"), .pos)],
                [(.expired(reason: .neverStarted), .system)],
            ]
            var checked: Set<OrderEventType> = []
            for (n, walk) in walks.enumerated() {
                let placed = try await store.place(
                    StoreFixtures.placement(posRef: "T-\(n)"), in: .default, role: .pos, request: StoreFixtures.request())
                let id = try StoreFixtures.orderID(placed)
                var steps: [(version: Int, type: OrderEventType)] = [(1, .placed)]
                try await expectSame(db, order: id, version: 1, .placed)
                // The activity the start opened registers its own token: the later events update or end it.
                _ = try await store.database.tokens.putActivityToken(
                    orderID: id, in: .default, token: String(repeating: "a\(n)", count: 32), environment: .sandbox, bundleID: nil)
                for (event, role) in walk {
                    let version = steps.count + 1
                    _ = try await store.apply(
                        event, to: id, in: .default, expectedVersion: nil, role: role,
                        request: StoreFixtures.request(path: "events \(version)", scope: role.rawValue))
                    try await expectSame(db, order: id, version: version, event.type)
                    steps.append((version, event.type))
                }
                checked.formUnion(steps.map(\.type))
            }
            #expect(checked == Set(OrderEventType.allCases))
        }
    }

    func expectSame(
        _ db: TestDatabase, order: UUID, version: Int, _ event: OrderEventType, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let (stored, pushed) = try await projections(db, order: order, version: version)
        #expect(pushed.count == 1, "one Live Activity push for \(event)", sourceLocation: sourceLocation)
        let decoder = JSONDecoder()
        let state = try decoder.decode(OrderActivityAttributes.ContentState.self, from: Data(stored.utf8))
        for body in pushed {
            var carried = try decoder.decode(PushBody.self, from: Data(body.utf8)).aps.contentState
            // The push's receipt (its placeholder until it is sent) is the push's, not the order's: never stored.
            #expect(carried.receipt == DeliveryReceipt.placeholder && state.receipt == nil, sourceLocation: sourceLocation)
            carried.receipt = nil
            #expect(carried == state, "\(event): the stored projection is the pushed one", sourceLocation: sourceLocation)
        }
    }
}
