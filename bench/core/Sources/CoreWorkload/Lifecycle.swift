import CremaAPNsProtocol
import CremaCore
import Foundation

/// The fixture: one order per language (en, es-MX, ja-JP) and ending, each through its whole life --
/// placed → started → delayed (10 min, an urgent delay) → ready → picked_up, and placed → started → canceled --
/// 24 events in all. The customer has a push-to-start token and an alert token; once the start went out, the
/// activity's own token is registered too, so later events update (and finally end) it. Every later event sees the
/// earlier events' pushes as sent, as the planner would read them from the outbox.
public struct Lifecycle: Sendable {
    public let steps: [EventStep]
    /// What each step gave when the fixture was built: every later run of a step must give the same.
    public let expected: [EventResult]

    /// The Live Activity event each step must plan, in step order (one push per step in this fixture).
    static let expectedActivityEvents: [String: [LiveActivityEvent]] = [
        "placed": [.start], "started": [.update], "delayed": [.update], "ready": [.update], "picked_up": [.end],
        "canceled": [.end],
    ]

    public var eventCount: Int { steps.count }

    public init() {
        var steps: [EventStep] = []
        var expected: [EventResult] = []
        var nextTargetID: Int64 = 1
        var nextDeliveryID: Int64 = 1
        for (index, shop) in Shop.all.enumerated() {
            for ending in [OrderEventType.pickedUp, .canceled] {
                let orderNumber = 100 + 2 * index + (ending == .canceled ? 1 : 0)
                let id = UUID(uuidString: String(format: "0c0ffee0-0000-4000-8000-%012d", orderNumber))!
                let placedAt = Self.start.addingTimeInterval(Double(orderNumber) * 7)
                let registered = placedAt.addingTimeInterval(-86_400)
                func target(_ kind: PushTargetKind) -> PushTarget {
                    defer { nextTargetID += 1 }
                    return PushTarget(
                        ref: PushTargetRef(kind: kind, id: nextTargetID), environment: .sandbox, registeredAt: registered,
                        bundleID: DeliveryPolicy.exampleBundleID)
                }
                var targets = [target(.pushToStart), target(.alert)]
                let activity = target(.liveActivity)
                var history: [DeliveryRecord] = []

                let placement = OrderPlacement(
                    storeID: shop.storeID, posRef: "pos-\(orderNumber)", customerRef: "customer-\(orderNumber)",
                    displayName: shop.customer, locale: shop.locale, items: shop.items, eta: placedAt.addingTimeInterval(8 * 60))
                var commands: [(Double, EventStep.Command?, OrderEvent?)] = [(0, .place(placement, id: id, number: orderNumber), nil)]
                commands.append((60, nil, .started(barista: shop.barista)))
                if ending == .pickedUp {
                    commands.append((180, nil, .delayed(eta: placedAt.addingTimeInterval(18 * 60), reason: shop.delayReason)))
                    commands.append((900, nil, .ready(pickupPoint: shop.pickupPoint)))
                    commands.append((1_080, nil, .pickedUp))
                } else {
                    commands.append((300, nil, .canceled(reason: shop.cancelReason)))
                }

                var order: Order?
                for (offset, placeCommand, event) in commands {
                    let command = placeCommand ?? .apply(event!, to: order!)
                    let type = event?.type ?? .placed
                    let step = EventStep(
                        name: "\(shop.locale) \(type.rawValue)", command: command, at: placedAt.addingTimeInterval(offset),
                        storeName: shop.storeName, timezone: shop.timezone, targets: targets, history: history)
                    let output = CoreEvent.run(step)
                    let result = CoreEvent.summary(output)
                    precondition(
                        result.activityEvents == Self.expectedActivityEvents[type.rawValue],
                        "\(step.name): planned \(result) (the fixture no longer walks the lifecycle it was written for)")
                    precondition(
                        output.plan.deliveries.allSatisfy { $0.body.json.count <= APNsBody.maxBytes }, "\(step.name): a body over 4 KB")
                    steps.append(step)
                    expected.append(result)
                    order = output.order
                    // The dispatcher sent every push before the next event.
                    for delivery in output.plan.deliveries {
                        history.append(DeliveryRecord(
                            id: nextDeliveryID, target: delivery.target, orderID: id, pushType: delivery.pushType,
                            liveActivityEvent: delivery.liveActivityEvent, priority: delivery.priority, state: .sent,
                            plannedAt: step.at, runAt: delivery.notBefore, apnsTimestamp: delivery.apnsTimestamp))
                        nextDeliveryID += 1
                    }
                    // The start made the activity; the app registers its token before the next event.
                    if type == .placed { targets.insert(activity, at: 0) }
                }
            }
        }
        self.steps = steps
        self.expected = expected
    }

    /// Runs every step once; stops the program when a step gives another result than it gave when the fixture was
    /// built (so a run cannot have measured less work). Returns the bytes produced, for a black hole.
    @discardableResult
    public func runChecked() -> Int {
        var bytes = 0
        for index in steps.indices {
            let result = CoreEvent.result(steps[index])
            guard result == expected[index] else {
                fatalError("\(steps[index].name): gave \(result), expected \(expected[index])")
            }
            bytes += result.projectionBytes + result.bodyBytes
        }
        return bytes
    }

    /// The total bytes one `runChecked` produces.
    public var expectedBytes: Int { expected.reduce(0) { $0 + $1.projectionBytes + $1.bodyBytes } }

    /// 2026-11-26 14:00 UTC: the orders' morning.
    static let start = Date(timeIntervalSince1970: 1_795_701_600)
}

/// One store and one customer per language, with the texts a POS and a barista would send there.
struct Shop: Sendable {
    var locale: String
    var storeID: String
    var storeName: String
    var timezone: String
    var customer: String
    var items: [OrderItem]
    var barista: String
    var delayReason: String
    var pickupPoint: String
    var cancelReason: String

    static let all: [Shop] = [
        Shop(
            locale: "en", storeID: "fifth-ave", storeName: "Crema Roasters — Fifth Ave", timezone: "America/New_York",
            customer: "Maya", items: [
                OrderItem(name: "Oat latte", size: "Large", quantity: 1, modifiers: ["Extra shot", "Vanilla"]),
                OrderItem(name: "Almond croissant", quantity: 2),
            ],
            barista: "Sam", delayReason: "Espresso machine warming up", pickupPoint: "Counter 2",
            cancelReason: "Out of oat milk"),
        Shop(
            locale: "es-MX", storeID: "condesa", storeName: "Crema Condesa", timezone: "America/Mexico_City",
            customer: "Lucía", items: [
                OrderItem(name: "Café de olla", size: "Grande", quantity: 2, modifiers: ["Sin azúcar"]),
                OrderItem(name: "Concha de vainilla", quantity: 1),
            ],
            barista: "Diego", delayReason: "Mucha gente en la barra", pickupPoint: "Barra 2",
            cancelReason: "Se acabó la leche de avena"),
        Shop(
            locale: "ja-JP", storeID: "shibuya", storeName: "クレマ 渋谷店", timezone: "Asia/Tokyo",
            customer: "さくら", items: [
                OrderItem(name: "抹茶ラテ", size: "トール", quantity: 1, modifiers: ["オーツミルク"]),
                OrderItem(name: "メロンパン", quantity: 1),
            ],
            barista: "ハルト", delayReason: "混雑のため", pickupPoint: "カウンター2",
            cancelReason: "オーツミルクが品切れ"),
    ]
}
