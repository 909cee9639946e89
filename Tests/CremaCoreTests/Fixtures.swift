import CremaAPNsProtocol
import CremaCore
import Foundation

/// Canonical orders and events shared by the core tests.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let later = now.addingTimeInterval(60)

    static func placement(items: [OrderItem] = [OrderItem(name: "Oat latte", size: "grande", modifiers: ["extra shot"])]) -> OrderPlacement {
        OrderPlacement(
            storeID: "market-st", posRef: "T-1001", customerRef: "c-9", displayName: "Ana", locale: "es",
            items: items, eta: now.addingTimeInterval(300))
    }

    static func order(in state: OrderState, version: Int = 2) -> Order {
        Order(
            id: UUID(uuidString: "00000000-0000-0000-0000-000000000042")!, storeID: "market-st", number: 42,
            posRef: "T-1001", customerRef: "c-9", displayName: "Ana", locale: "es",
            items: [OrderItem(name: "Oat latte")], eta: now.addingTimeInterval(300), state: state,
            version: version, placedAt: now, updatedAt: now)
    }

    static func event(_ type: OrderEventType) -> OrderEvent {
        switch type {
        case .placed: fatalError("placed is not an OrderEvent; use OrderStateMachine.place")
        case .started: .started(barista: "Sam")
        case .delayed: .delayed(eta: now.addingTimeInterval(600), reason: "busy")
        case .ready: .ready(pickupPoint: "counter")
        case .pickedUp: .pickedUp
        case .canceled: .canceled(reason: "customer left")
        case .expired: .expired(reason: .notCollected)
        }
    }

    /// The event of `type` as it would be sent to an order in `state`: an expiry names the reason that state has.
    static func event(_ type: OrderEventType, for state: OrderState) -> OrderEvent {
        guard type == .expired else { return event(type) }
        return .expired(reason: state == .queued ? .neverStarted : .notCollected)
    }
}
