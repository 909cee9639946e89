import CremaCore
import Foundation
import Testing

/// `RelevanceInterval`: when an order matters to the watch, from the order alone (docs/customer-api.md, "Relevance").
@Suite struct RelevanceIntervalTests {
    static let now = Fixtures.now

    static func apply(_ event: OrderEvent, to order: Order, at time: Date) -> Order {
        try! OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: time)
    }

    static var placed: Order {
        try! OrderStateMachine.place(Fixtures.placement(), id: Fixtures.order(in: .queued).id, number: 42, at: now)
    }

    @Test("an open order is relevant from its placement to thirty minutes after its ETA") func anOpenOrderIsRelevantFromItsPlacementToThirtyMinutesAfterItsETA() throws {
        let queued = Self.placed
        let preparing = Self.apply(.started(barista: "Sam"), to: queued, at: Self.now.addingTimeInterval(60))
        for order in [queued, preparing] {
            let interval = try #require(RelevanceInterval.of(order))
            #expect(interval.start == Self.now)
            #expect(interval.end == order.eta.addingTimeInterval(30 * 60))
            #expect(RelevanceInterval.pickupWindowEnd(order) == interval.end)
        }
    }

    @Test("a ready order's window ends thirty minutes after the later of its ETA and when it became ready") func aReadyOrdersWindowEndsThirtyMinutesAfterTheLaterOfItsETAAndWhenItBecameReady() throws {
        let eta = Self.placed.eta
        let early = Self.apply(.ready(pickupPoint: "counter"), to: Self.placed, at: eta.addingTimeInterval(-120))
        #expect(try #require(RelevanceInterval.of(early)).end == eta.addingTimeInterval(30 * 60))
        let late = Self.apply(.ready(pickupPoint: "counter"), to: Self.placed, at: eta.addingTimeInterval(600))
        #expect(try #require(RelevanceInterval.of(late)).end == eta.addingTimeInterval(600 + 30 * 60))
        #expect(try #require(RelevanceInterval.of(late)).start == Self.now)
    }

    @Test("a finished order has no relevance interval") func aFinishedOrderHasNoRelevanceInterval() {
        let ready = Self.apply(.ready(pickupPoint: "counter"), to: Self.placed, at: Self.now)
        #expect(RelevanceInterval.of(Self.apply(.pickedUp, to: ready, at: Self.now)) == nil)
        #expect(RelevanceInterval.of(Self.apply(.canceled(reason: "left"), to: Self.placed, at: Self.now)) == nil)
        #expect(RelevanceInterval.of(Self.apply(.expired(reason: .notCollected), to: ready, at: Self.now)) == nil)
    }

    @Test("an ETA already past at placement gives an interval that never ends before it starts") func anETAAlreadyPastAtPlacementGivesAnIntervalThatNeverEndsBeforeItStarts() throws {
        var order = Self.placed
        order.eta = Self.now.addingTimeInterval(-3600)
        let interval = try #require(RelevanceInterval.of(order))
        #expect(interval.start == Self.now)
        #expect(interval.end == Self.now)
    }

    @Test("the widget window and the relevance interval end together") func theWidgetWindowAndTheRelevanceIntervalEndTogether() throws {
        let queued = Self.placed
        let late = Self.apply(.ready(pickupPoint: "counter"), to: queued, at: queued.eta.addingTimeInterval(900))
        for order in [queued, late] {
            let widget = RelevanceInterval.widget(order)
            #expect(widget.end == (try #require(RelevanceInterval.of(order))).end)
            #expect(widget.start == min(order.eta.addingTimeInterval(-15 * 60), RelevanceInterval.readySince(order) ?? .distantFuture))
        }
    }

    @Test("only a delay or a late ready moves an open order's interval") func onlyADelayOrALateReadyMovesAnOpenOrdersInterval() {
        let queued = Self.placed
        let preparing = Self.apply(.started(barista: "Sam"), to: queued, at: Self.now.addingTimeInterval(60))
        let delayed = Self.apply(.delayed(eta: queued.eta.addingTimeInterval(600), reason: "machine"), to: preparing, at: Self.now.addingTimeInterval(90))
        let sameETA = Self.apply(.delayed(eta: queued.eta, reason: "still on time"), to: preparing, at: Self.now.addingTimeInterval(90))
        let early = Self.apply(.ready(pickupPoint: "counter"), to: preparing, at: queued.eta.addingTimeInterval(-60))
        let late = Self.apply(.ready(pickupPoint: "counter"), to: preparing, at: queued.eta.addingTimeInterval(60))
        #expect(RelevanceInterval.moved(from: preparing, to: delayed))
        #expect(RelevanceInterval.moved(from: preparing, to: late))
        #expect(!RelevanceInterval.moved(from: queued, to: preparing))
        #expect(!RelevanceInterval.moved(from: preparing, to: sameETA))
        #expect(!RelevanceInterval.moved(from: preparing, to: early))
        // Appearing and finishing are what the widget shows, not a move.
        #expect(!RelevanceInterval.moved(from: nil, to: queued))
        #expect(!RelevanceInterval.moved(from: late, to: Self.apply(.pickedUp, to: late, at: queued.eta.addingTimeInterval(120))))
    }

    @Test("a store location is refused outside the ranges of a place on earth") func aStoreLocationIsRefusedOutsideTheRangesOfAPlaceOnEarth() throws {
        #expect(try StoreLocation.validated(latitude: 37.7936, longitude: -122.3958) == StoreLocation(latitude: 37.7936, longitude: -122.3958))
        #expect(try StoreLocation.validated(latitude: -90, longitude: 180) == StoreLocation(latitude: -90, longitude: 180))
        for (latitude, longitude, field) in [
            (90.5, 0.0, "location.latitude"), (-91.0, 0.0, "location.latitude"), (Double.nan, 0.0, "location.latitude"),
            (0.0, 180.01, "location.longitude"), (0.0, -Double.infinity, "location.longitude"),
        ] {
            #expect(throws: OrderError.invalidValue(field: field, reason: field.hasSuffix("latitude") ? "must be a number from -90 to 90" : "must be a number from -180 to 180")) {
                try StoreLocation.validated(latitude: latitude, longitude: longitude)
            }
        }
    }
}
