import CremaCore
import Foundation
import PropertyBased
import Testing

/// `OrderStateMachine.previous(of:placedETA:events:)` gives the preview the order its last event found: over random
/// histories (every event each state allows, delays of any size, minutes between events), the replay of the events
/// before the last is the order `apply` was given, field for field.
@Suite struct OrderReplayPropertyTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// The `choice`-th event `order`'s state allows, Crema's own close included.
    static func event(_ choice: Int, for order: Order) -> OrderEvent? {
        var events: [OrderEvent] = order.allowedEvents.map { type in
            switch type {
            case .started: .started(barista: "Sam")
            case .delayed: .delayed(eta: order.eta.addingTimeInterval(TimeInterval(1 + choice % 8) * 240), reason: choice % 2 == 0 ? "Oat milk" : nil)
            case .ready: .ready(pickupPoint: choice % 3 == 0 ? nil : "counter")
            case .canceled: .canceled(reason: "Customer left")
            case .placed, .pickedUp, .expired: .pickedUp
            }
        }
        for reason in ExpiryReason.allCases where reason.expiredState == order.state { events.append(.expired(reason: reason)) }
        return events.isEmpty ? nil : events[choice % events.count]
    }

    @Test("replaying the events before the last gives the order the last event was applied to")
    func replayGivesThePreviousOrder() async {
        await propertyCheck(count: 300, input: zip(Gen.int(in: 0...15), Gen.int(in: 1...400)).array(of: 0...8)) { steps in
            let placement = OrderPlacement(
                storeID: "market-st", posRef: "T-1", customerRef: "c-1", displayName: "Ana", locale: "en",
                items: [OrderItem(name: "Flat white")], eta: Self.now.addingTimeInterval(300))
            var order = try OrderStateMachine.place(placement, id: UUID(), number: 7, at: Self.now)
            #expect(OrderStateMachine.previous(of: order, placedETA: placement.eta, events: []) == nil)
            var at = Self.now
            var events: [(event: OrderEvent, at: Date)] = []
            for (choice, seconds) in steps {
                guard let event = Self.event(choice, for: order) else { break }
                at = at.addingTimeInterval(TimeInterval(seconds))
                let before = order
                order = try OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: at)
                events.append((event, at))
                #expect(OrderStateMachine.previous(of: order, placedETA: placement.eta, events: events) == before, "\(events.map(\.event))")
            }
        }
    }

    @Test("a history that does not lead to the order replays to nothing")
    func aHistoryThatDoesNotLeadToTheOrderReplaysToNothing() throws {
        let placement = OrderPlacement(
            storeID: "market-st", posRef: "T-1", customerRef: "c-1", displayName: "Ana", locale: "en",
            items: [OrderItem(name: "Flat white")], eta: Self.now.addingTimeInterval(300))
        let placed = try OrderStateMachine.place(placement, id: UUID(), number: 7, at: Self.now)
        let ready = try OrderStateMachine.apply(.ready(pickupPoint: nil), to: placed, expectedVersion: nil, at: Self.now)
        // One event short of the order's version, or events the states do not allow in that order.
        #expect(OrderStateMachine.previous(of: ready, placedETA: placement.eta, events: []) == nil)
        #expect(OrderStateMachine.previous(of: ready, placedETA: placement.eta, events: [(.pickedUp, Self.now)]) == nil)
        #expect(OrderStateMachine.previous(of: ready, placedETA: placement.eta, events: [(.ready(pickupPoint: nil), Self.now)]) == placed)
    }
}
