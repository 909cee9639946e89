import CremaCore
import Foundation
import Testing

/// The collapse id every push-to-start carries, so a start sent twice makes one activity (push-anchors P8).
@Suite struct StartCollapseIDTests {
    @Test("a start's collapse id names its order and a board's its store and customer, each within 64 bytes")
    func aStartsCollapseIDNamesItsOrderAndABoardsItsStoreAndCustomerEachWithin64Bytes() {
        let order = UUID()
        #expect(StartCollapseID.order(order) == "start-" + order.uuidString.lowercased())
        let long = String(repeating: "x", count: 200)
        let board = StartCollapseID.board(store: String(repeating: "s", count: 63), customerRef: long)
        #expect(board.utf8.count == 22 && board.hasPrefix("board-"))
        #expect(board == StartCollapseID.board(store: String(repeating: "s", count: 63), customerRef: long))
        #expect(StartCollapseID.board(store: "s1", customerRef: "a") != StartCollapseID.board(store: "s1", customerRef: "b"))
        #expect(StartCollapseID.board(store: "s1a", customerRef: "") != StartCollapseID.board(store: "s1", customerRef: "a"))
    }
}
