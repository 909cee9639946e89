import CremaCore
import CremaPostgres
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// "Open" has one home in SQL, the stored column `orders.is_open` (migration 022), and it agrees with `OrderState`;
/// no index of `orders` names `state`, so an event that keeps its order open can rewrite the row in place (HOT).
@Suite struct OpenOrderSQLTests {
    static let open = Set(OrderState.allCases.filter { !$0.isTerminal }.map(\.rawValue))

    /// The quoted words of a SQL text.
    static func quoted(_ text: String) -> Set<String> {
        Set(text.split(separator: "'", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }

    @Test("the column of open orders is computed from the states that are not terminal") func theColumnOfOpenOrdersIsComputedFromTheStatesThatAreNotTerminal() async throws {
        try await TestDatabase.with { db in
            let expression = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
                    JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                    WHERE d.adrelid = 'orders'::regclass AND a.attname = 'is_open' AND a.attgenerated = 's'
                    """
                ).map { try $0.decode(at: 0, as: String.self) }
            }
            #expect(expression.count == 1)
            #expect(Self.quoted(expression.first ?? "") == Self.open)
            #expect(Set(OrderState.open.map(\.rawValue)) == Self.open)
        }
    }

    @Test("the column says open for each state exactly when Swift says it is not terminal") func theColumnSaysOpenForEachStateExactlyWhenSwiftSaysItIsNotTerminal() async throws {
        try await TestDatabase.with { db in
            // The column's own expression, as PostgreSQL stores it, evaluated over a row holding each state.
            let expression = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
                    JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                    WHERE d.adrelid = 'orders'::regclass AND a.attname = 'is_open'
                    """
                ).first.map { try $0.decode(at: 0, as: String.self) }
            }
            let generated = try #require(expression)
            for state in OrderState.allCases {
                let open = try await db.pool.withConnection { connection in
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT \(generated) FROM (SELECT $1::text AS state) AS orders", binds: [state.rawValue])
                    ).first.map { try $0.decode(at: 0, as: Bool.self) }
                }
                #expect(open == !state.isTerminal, "\(state)")
            }
        }
    }

    @Test("no index of orders names the state, in its key or its predicate") func noIndexOfOrdersNamesTheStateInItsKeyOrItsPredicate() async throws {
        try await TestDatabase.with { db in
            let indexes = try await db.pool.withConnection { connection in
                try await connection.query(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'orders'"
                ).map { (try $0.decode(at: 0, as: String.self), try $0.decode(at: 1, as: String.self)) }
            }
            #expect(indexes.contains { $0.0 == "orders_open" })
            for (name, definition) in indexes {
                #expect(!definition.contains("state") && !definition.contains("updated_at"), "\(name): \(definition)")
            }
        }
    }
}
