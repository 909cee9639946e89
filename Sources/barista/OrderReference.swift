import CremaAPI
import ArgumentParser
import Foundation

/// How a barista names an order: the number on the cup (`42` or `#42`, within the store) or its full id.
enum OrderReference: ExpressibleByArgument, Sendable, CustomStringConvertible {
    case number(Int)
    case id(String)

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        if let uuid = UUID(uuidString: text) {
            self = .id(uuid.uuidString.lowercased())
        } else if let number = Int(text.hasPrefix("#") ? String(text.dropFirst()) : text), number > 0 {
            self = .number(number)
        } else {
            return nil
        }
    }

    static var defaultCompletionKind: CompletionKind { .default }

    var description: String {
        switch self {
        case .number(let number): "#\(number)"
        case .id(let id): id
        }
    }

    /// Finds the order as it is right now. By number: the store's board first (open orders, the usual
    /// case), then its full order list, oldest first, for orders already picked up or canceled.
    func resolve(with client: CremaClient, settings: Settings) async throws -> OrderResponse {
        switch self {
        case .id(let id):
            do {
                return try await client.order(id: id)
            } catch let failure as APIFailure where failure.code == "unknown_order" {
                throw BaristaError(.notFound, "There is no order \(id) on \(client.server): check the id, or use the number on the cup.",
                    code: failure.code)
            }
        case .number(let number):
            let store = try settings.requireStore(for: "Order #\(number)")
            let found: OrderResponse?
            do {
                found = try await Self.find(number: number, store: store, client: client)
            } catch let failure as APIFailure {
                throw failure.asBaristaError(server: client.server)
            }
            guard let found else {
                throw BaristaError(.notFound, "There is no order #\(number) in store '\(store)': barista queue lists the open ones.",
                    code: "unknown_order")
            }
            // The board has no history; read the order itself so a change carries the version just seen.
            return try await client.order(id: found.idText)
        }
    }

    private static func find(number: Int, store: String, client: CremaClient) async throws -> OrderResponse? {
        let board = try await client.board(store: store)
        if let open = board.columns.values.joined().first(where: { $0.number == number }) { return open }
        var cursor: String?
        repeat {
            let page = try await client.orders(store: store, limit: 200, cursor: cursor)
            if let order = page.orders.first(where: { $0.number == number }) { return order }
            cursor = page.nextCursor
        } while cursor != nil
        return nil
    }
}
