import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct OrderQueryTests {
    @Test("pages walk every order once oldest first") func pagesWalkEveryOrderOnceOldestFirst() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            var placed: [UUID] = []
            for n in 0..<5 {
                placed.append(try StoreFixtures.orderID(
                    try await store.place(StoreFixtures.placement(posRef: "T-\(n)"), in: .default, role: .pos, request: StoreFixtures.request())))
            }
            var seen: [UUID] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await store.database.orders.orders(store: "market-st", in: .default, state: nil, limit: 2, cursor: cursor)
                seen += page.orders.map(\.id)
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil
            #expect(seen == placed)
            #expect(pages == 3)
        }
    }

    @Test("listing filters by state") func listingFiltersByState() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let id = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            _ = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
            _ = try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())
            let preparing = try await store.database.orders.orders(store: "market-st", in: .default, state: .preparing, limit: 50, cursor: nil)
            #expect(preparing.orders.map(\.id) == [id])
            #expect(preparing.nextCursor == nil)
        }
    }

    /// Not base64; then well-formed ones whose positions lie outside what PostgreSQL can hold
    /// (`Int64.max` and −10^17 microseconds): refused, never a crash or a database error.
    @Test("a forged cursor is refused", arguments: [
        "not-a-cursor!",
        "OTIyMzM3MjAzNjg1NDc3NTgwNy8wMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDA",
        "LTEwMDAwMDAwMDAwMDAwMDAwMC8wMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDA",
    ])
    func aForgedCursorIsRefused(_ cursor: String) async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            await #expect(throws: StoreError.invalidCursor) {
                try await store.database.orders.orders(store: "market-st", in: .default, state: nil, limit: 10, cursor: cursor)
            }
        }
    }

    @Test("the board groups open orders by state and leaves finished ones out") func theBoardGroupsOpenOrdersByStateAndLeavesFinishedOnesOut() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            var ids: [UUID] = []
            for _ in 0..<4 {
                ids.append(try StoreFixtures.orderID(
                    try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())))
            }
            _ = try await store.apply(.started(barista: "Sam"), to: ids[1], in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())
            _ = try await store.apply(.ready(pickupPoint: nil), to: ids[2], in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())
            _ = try await store.apply(.canceled(reason: "left"), to: ids[3], in: .default, expectedVersion: nil, role: .pos, request: StoreFixtures.request())
            let board = try await store.database.orders.board(store: "market-st", in: .default)
            #expect(board.columns[.queued]?.map(\.id) == [ids[0]])
            #expect(board.columns[.preparing]?.map(\.id) == [ids[1]])
            #expect(board.columns[.ready]?.map(\.id) == [ids[2]])
            #expect(board.columns[.canceled] == nil)
        }
    }

    @Test("the board of an unknown store is an error") func theBoardOfAnUnknownStoreIsAnError() async throws {
        try await TestDatabase.with { db in
            await #expect(throws: StoreError.unknownStore("ghost")) { try await OrderService(database: CremaDatabase(pool: db.pool, clock: .system), clock: .system).database.orders.board(store: "ghost", in: .default) }
        }
    }
}

@Suite struct StoreErrorLoggingTests {
    @Test("a database failure prints its kind and SQLSTATE, never the server's text, which can quote row values")
    func aDatabaseFailurePrintsNoRowData() {
        let failure = StoreError.database(
            PostgresError(.server, sqlState: "23505", detail: "Key (customer_ref)=(Ana Secret) already exists."))
        let printed = "\(failure)"
        #expect(printed.contains("23505"))
        #expect(!printed.contains("Ana Secret"))
        #expect(!"\(failure)".contains("already exists"))
    }
}
