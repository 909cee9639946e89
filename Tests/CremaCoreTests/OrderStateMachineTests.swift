import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// Every (state, event) pair of docs/design.md §3, written out by hand so the table is the specification.
@Suite struct OrderStateMachineTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var from: OrderState?
        var event: OrderEventType
        var to: OrderState?
        var testDescription: String { "\(from?.rawValue ?? "none") + \(event.rawValue) → \(to?.rawValue ?? "refused")" }
    }

    static let table: [Case] = [
        Case(from: nil, event: .placed, to: .queued),
        Case(from: nil, event: .started, to: nil),
        Case(from: nil, event: .delayed, to: nil),
        Case(from: nil, event: .ready, to: nil),
        Case(from: nil, event: .pickedUp, to: nil),
        Case(from: nil, event: .canceled, to: nil),
        Case(from: nil, event: .expired, to: nil),

        Case(from: .queued, event: .placed, to: nil),
        Case(from: .queued, event: .started, to: .preparing),
        Case(from: .queued, event: .delayed, to: .queued),
        Case(from: .queued, event: .ready, to: .ready),
        Case(from: .queued, event: .pickedUp, to: nil),
        Case(from: .queued, event: .canceled, to: .canceled),
        Case(from: .queued, event: .expired, to: .canceled),

        Case(from: .preparing, event: .placed, to: nil),
        Case(from: .preparing, event: .started, to: nil),
        Case(from: .preparing, event: .delayed, to: .preparing),
        Case(from: .preparing, event: .ready, to: .ready),
        Case(from: .preparing, event: .pickedUp, to: nil),
        Case(from: .preparing, event: .canceled, to: .canceled),
        Case(from: .preparing, event: .expired, to: nil),

        Case(from: .ready, event: .placed, to: nil),
        Case(from: .ready, event: .started, to: nil),
        Case(from: .ready, event: .delayed, to: nil),
        Case(from: .ready, event: .ready, to: nil),
        Case(from: .ready, event: .pickedUp, to: .pickedUp),
        Case(from: .ready, event: .canceled, to: .canceled),
        Case(from: .ready, event: .expired, to: .canceled),

        Case(from: .pickedUp, event: .placed, to: nil),
        Case(from: .pickedUp, event: .started, to: nil),
        Case(from: .pickedUp, event: .delayed, to: nil),
        Case(from: .pickedUp, event: .ready, to: nil),
        Case(from: .pickedUp, event: .pickedUp, to: nil),
        Case(from: .pickedUp, event: .canceled, to: nil),
        Case(from: .pickedUp, event: .expired, to: nil),

        Case(from: .canceled, event: .placed, to: nil),
        Case(from: .canceled, event: .started, to: nil),
        Case(from: .canceled, event: .delayed, to: nil),
        Case(from: .canceled, event: .ready, to: nil),
        Case(from: .canceled, event: .pickedUp, to: nil),
        Case(from: .canceled, event: .canceled, to: nil),
        Case(from: .canceled, event: .expired, to: nil),
    ]

    @Test("the table covers every state and event exactly once") func theTableCoversEveryStateAndEventExactlyOnce() {
        let sources: [OrderState?] = [nil] + OrderState.allCases.map(Optional.some)
        for source in sources {
            for event in OrderEventType.allCases {
                let rows = Self.table.filter { $0.from == source && $0.event == event }
                #expect(rows.count == 1, "\(String(describing: source)) × \(event)")
            }
        }
        #expect(Self.table.count == 6 * OrderEventType.allCases.count)
    }

    @Test("transition follows the table", arguments: table) func transitionFollowsTheTable(_ row: Case) {
        #expect(OrderStateMachine.target(of: row.event, from: row.from) == row.to)
        // System-only events (`expired`) are never offered to clients, even where the machine accepts them.
        #expect(OrderStateMachine.allowedEvents(from: row.from).contains(row.event) == (row.to != nil && !row.event.isSystemOnly))
    }

    /// Drives `apply` itself (not only `target`) for every post-placement pair.
    @Test("apply accepts or refuses each pair", arguments: table.filter { $0.from != nil && $0.event != .placed })
    func applyAcceptsOrRefusesEachPair(_ row: Case) throws {
        let order = Fixtures.order(in: row.from!)
        let event = Fixtures.event(row.event, for: row.from!)
        if let expected = row.to {
            let next = try OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: Fixtures.later)
            #expect(next.state == expected)
            #expect(next.version == order.version + 1)
            #expect(next.updatedAt == Fixtures.later)
        } else {
            #expect(throws: OrderError.invalidTransition(from: row.from!, event: row.event, allowed: order.allowedEvents)) {
                try OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: Fixtures.later)
            }
        }
    }

    @Test("terminal states accept nothing", arguments: OrderState.allCases) func terminalStatesAcceptNothing(_ state: OrderState) {
        #expect(OrderStateMachine.allowedEvents(from: state).isEmpty == state.isTerminal)
    }

    @Test("placing creates a queued order at version one") func placingCreatesAQueuedOrderAtVersionOne() throws {
        let id = UUID()
        let order = try OrderStateMachine.place(Fixtures.placement(), id: id, number: 42, at: Fixtures.now)
        #expect(order.id == id)
        #expect(order.number == 42)
        #expect(order.state == .queued)
        #expect(order.version == 1)
        #expect(order.placedAt == Fixtures.now)
        #expect(order.allowedEvents == [.started, .delayed, .ready, .canceled])
    }

    @Test("a stale expected version is a conflict even when the event would be allowed") func aStaleExpectedVersionIsAConflictEvenWhenTheEventWouldBeAllowed() {
        let order = Fixtures.order(in: .preparing, version: 3)
        #expect(throws: OrderError.versionConflict(expected: 2, actual: 3, state: .preparing)) {
            try OrderStateMachine.apply(.ready(pickupPoint: nil), to: order, expectedVersion: 2, at: Fixtures.later)
        }
    }

    @Test("the version check comes before the transition check") func theVersionCheckComesBeforeTheTransitionCheck() {
        let order = Fixtures.order(in: .canceled, version: 4)
        #expect(throws: OrderError.versionConflict(expected: 3, actual: 4, state: .canceled)) {
            try OrderStateMachine.apply(.pickedUp, to: order, expectedVersion: 3, at: Fixtures.later)
        }
    }

    @Test("a matching expected version is accepted") func aMatchingExpectedVersionIsAccepted() throws {
        let order = Fixtures.order(in: .queued, version: 1)
        let next = try OrderStateMachine.apply(.started(barista: "Sam"), to: order, expectedVersion: 1, at: Fixtures.later)
        #expect(next.barista == "Sam")
        #expect(next.version == 2)
    }

    @Test("events record what they carry") func eventsRecordWhatTheyCarry() throws {
        var order = Fixtures.order(in: .queued)
        let newETA = Fixtures.now.addingTimeInterval(900)
        order = try OrderStateMachine.apply(.delayed(eta: newETA, reason: "milk delivery"), to: order, expectedVersion: nil, at: Fixtures.later)
        #expect(order.state == .queued)
        #expect(order.eta == newETA)
        #expect(order.delayReason == "milk delivery")
        order = try OrderStateMachine.apply(.ready(pickupPoint: "counter"), to: order, expectedVersion: nil, at: Fixtures.later)
        #expect(order.pickupPoint == "counter")
        order = try OrderStateMachine.apply(.canceled(reason: "left"), to: order, expectedVersion: nil, at: Fixtures.later)
        #expect(order.state == .canceled)
        #expect(order.cancelReason == "left")
    }

    @Test("refusals name the allowed events") func refusalsNameTheAllowedEvents() {
        let error = OrderError.invalidTransition(from: .ready, event: .started, allowed: [.pickedUp, .canceled])
        #expect(error.code == "invalid_transition")
        #expect(error.message.contains("picked_up, canceled"))
    }

    @Test("only the POS places orders and only baristas start or ready", arguments: OrderEventType.allCases) func onlyThePOSPlacesOrdersAndOnlyBaristasStartOrReady(_ type: OrderEventType) {
        let roles = type.permittedRoles
        #expect(!roles.contains(.dashboard) && !roles.contains(.app))
        switch type {
        case .placed: #expect(roles == [.pos])
        case .started, .ready: #expect(roles == [.barista])
        case .delayed, .pickedUp, .canceled: #expect(roles == [.pos, .barista])
        case .expired: #expect(roles == [.system])
        }
    }
}
