import CremaCore
import CremaPostgres
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// "Open" has one home in SQL (`OpenOrderSQL.states`) and it agrees with `OrderState`, and so do the partial indexes
/// the migrations built on it: a state added to the Swift enum, or an index declared with another list, fails here.
@Suite struct OpenOrderSQLTests {
    static let open = Set(OrderState.allCases.filter { !$0.isTerminal }.map(\.rawValue))

    /// The quoted words of a SQL text.
    static func quoted(_ text: String) -> Set<String> {
        Set(text.split(separator: "'", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }

    @Test("the SQL list of open states is the states that are not terminal") func theSQLListOfOpenStatesIsTheStatesThatAreNotTerminal() {
        #expect(Self.quoted("\(OpenOrderSQL.states)") == Self.open)
        #expect(Set(OrderState.open.map(\.rawValue)) == Self.open)
    }

    @Test("every partial index of open orders names the open states") func everyPartialIndexOfOpenOrdersNamesTheOpenStates() async throws {
        try await TestDatabase.with { db in
            let predicates = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT c.relname, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                    WHERE i.indrelid = 'orders'::regclass AND i.indpred IS NOT NULL
                    """
                ).map { (try $0.decode(at: 0, as: String.self), try $0.decode(at: 1, as: String.self)) }
            }
            // The indexes of open orders, by name: others select one state ('ready' orders to expire) or the terminal ones.
            let open = predicates.filter { $0.0.contains("_open_") }
            #expect(open.map(\.0).contains("orders_open_by_store"))
            for (index, predicate) in open {
                #expect(Self.quoted(predicate) == Self.open, "\(index): \(predicate)")
            }
        }
    }
}
