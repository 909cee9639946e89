import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

/// Canonical orders for the projection tests, and the checks every projection must pass.
enum ActivityFixtures {
    static let now = Fixtures.now
    static let losAngeles = TimeZone(identifier: "America/Los_Angeles")!
    static let storeName = "Market St"

    static func order(
        _ state: OrderState,
        locale: String = "en",
        eta: TimeInterval = 300,
        items: [OrderItem] = [OrderItem(name: "Oat latte", size: "grande", quantity: 1, modifiers: ["extra shot"]),
                              OrderItem(name: "Croissant", quantity: 2)]
    ) -> Order {
        Order(
            id: UUID(uuidString: "3f1c2a9e-8b7d-4c6e-9a5f-0d1e2f3a4b5c")!, storeID: "market-st", number: 42,
            posRef: "T-1001", customerRef: "c-9", displayName: locale.hasPrefix("ja") ? "さくら" : "Ana", locale: locale,
            items: items, eta: now.addingTimeInterval(eta), state: state, version: 3,
            barista: state == .queued ? nil : "Sam",
            pickupPoint: state == .ready || state == .pickedUp ? pickupPoint(locale) : nil,
            placedAt: now.addingTimeInterval(-120), updatedAt: now)
    }

    static func pickupPoint(_ locale: String) -> String {
        switch ActivityLanguage(localeTag: locale) {
        case .english: "the counter"
        case .spanish: "la barra"
        case .japanese: "カウンター"
        }
    }

    static func contentState(_ order: Order, now: Date = now, timeZone: TimeZone = losAngeles) -> OrderActivityAttributes.ContentState {
        OrderProjector.contentState(order: order, storeName: storeName, timeZone: timeZone, now: now, locale: order.locale)
    }

    /// Every text of a content state with its budget, by its path in the JSON.
    static func texts(_ s: OrderActivityAttributes.ContentState) -> [(path: String, text: String, budget: Int)] {
        var all: [(String, String, Int)] = [
            ("compactLeading.text", s.compactLeading.text, FamilyBudget.compactLeading),
            ("compactTrailing.text", s.compactTrailing.text, FamilyBudget.compactTrailing),
            ("small.title", s.small.title, FamilyBudget.smallTitle),
            ("small.status", s.small.status, FamilyBudget.smallStatus),
            ("lockScreen.title", s.lockScreen.title, FamilyBudget.lockTitle),
            ("lockScreen.subtitle", s.lockScreen.subtitle, FamilyBudget.lockSubtitle),
        ]
        if let text = s.minimal.text { all.append(("minimal.text", text, FamilyBudget.minimal)) }
        if let text = s.lockScreen.detail { all.append(("lockScreen.detail", text, FamilyBudget.lockDetail)) }
        if let text = s.lockScreen.etaRelative { all.append(("lockScreen.etaRelative", text, FamilyBudget.lockETARelative)) }
        if let text = s.lockScreen.etaAbsolute { all.append(("lockScreen.etaAbsolute", text, FamilyBudget.lockETAAbsolute)) }
        if let text = s.pickupPoint { all.append(("pickupPoint", text, FamilyBudget.pickupPoint)) }
        if let text = s.baristaName { all.append(("baristaName", text, FamilyBudget.baristaName)) }
        return all
    }

    static func expectWithinBudgets(_ state: OrderActivityAttributes.ContentState, sourceLocation: SourceLocation = #_sourceLocation) {
        for (path, text, budget) in texts(state) {
            let columns = DisplayWidth.columns(of: text)
            #expect(columns <= budget, "\(path) takes \(columns) columns, budget \(budget): \(text)", sourceLocation: sourceLocation)
            #expect(!text.isEmpty || path.hasSuffix("Name"), "\(path) is empty", sourceLocation: sourceLocation)
        }
    }

    /// Every body Crema can build for an order at `now`: the three activity events, an alert per event, the
    /// widget body.
    static func allBodies(_ order: Order, now: Date = now, storeName: String = storeName) -> [(name: String, body: APNsBody)] {
        var bodies: [(String, APNsBody)] = LiveActivityEvent.allCases.map { event in
            let alertFor: OrderEventType? = event == .update ? .ready : nil
            return ("liveactivity.\(event.rawValue)", APNsBodyBuilder.liveActivity(
                order: order, storeName: storeName, timeZone: losAngeles, now: now, locale: order.locale,
                event: event, alertFor: alertFor))
        }
        for event in OrderEventType.allCases {
            bodies.append(("alert.\(event.rawValue)", APNsBodyBuilder.alert(
                for: event, order: order, storeName: storeName, timeZone: losAngeles, now: now, locale: order.locale)))
        }
        bodies.append(("widgets", APNsBodyBuilder.widget))
        return bodies
    }

    static func jsonObject(_ data: Data) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
