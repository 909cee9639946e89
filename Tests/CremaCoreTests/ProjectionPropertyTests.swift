import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import PropertyBased
import Testing

/// Random orders with long, mixed-script, emoji-laden names: whatever the POS sends, every body fits APNs,
/// is valid JSON with the status intact and 2001-epoch dates, and every text fits its family's budget.
@Suite struct ProjectionPropertyTests {
    typealias F = ActivityFixtures

    /// Pieces names are built from: Latin, accents, CJK, kana, Hangul, Arabic, fullwidth, emoji of every
    /// kind (skin tones, ZWJ families, flags, keycaps, VS16), and stacks of combining marks.
    static let fragments: [String] = [
        "Ana", "María José", "Oat latte", " ", "-", "'", "\"", "\\", "/", "é", "e\u{301}", "ñ", "ß",
        "抹茶", "ほうじ茶", "ラテ", "ｶﾌｪ", "카페라떼", "한국", "咖啡", "قهوة", "עברית", "Ｃｏｆｆｅｅ",
        "☕", "🥐", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇯🇵", "🇲🇽", "❤️", "1️⃣", "✨", "🧋",
        "a" + String(repeating: "\u{0300}", count: 12), "Z" + String(repeating: "\u{0489}", count: 30),
    ] + heavy

    /// One column each but a hundred bytes or more: they push bodies past 4096 bytes within column budgets.
    static let heavy: [String] = (1...12).map { n in
        String(repeating: "ë" + String(repeating: "\u{0336}\u{0489}", count: 20 + 5 * n), count: 2)
    } + ["🏴󠁧󠁢󠁳󠁣󠁴󠁿🏴󠁧󠁢󠁷󠁬󠁳󠁿", "👩🏽‍❤️‍💋‍👨🏿"]

    static let text = Gen<String?>.element(of: fragments).map { $0 ?? "" }.array(of: 1...40).map { $0.joined() }
    static let shortText = Gen<String?>.element(of: fragments).map { $0 ?? "" }.array(of: 1...8).map { $0.joined() }

    static let item = zip(text, shortText.optional, Gen.int(in: 1...99)).map { name, size, quantity in
        OrderItem(name: name, size: size, quantity: quantity)
    }

    static let order = zip(
        zip(Gen<OrderState>.case, Gen.int(in: 1...99_999), item.array(of: 1...50)),
        zip(text, text.optional, text.optional),
        zip(Gen.int(in: -3600...86_400), Gen<String?>.element(of: ["en", "es", "ja", "es-MX", "ja-JP", "fr", "x-klingon"]))
    ).map { first, names, rest in
        Order(
            id: UUID(uuidString: "3f1c2a9e-8b7d-4c6e-9a5f-0d1e2f3a4b5c")!, storeID: "market-st", number: first.1,
            posRef: "T-1", customerRef: nil, displayName: names.0, locale: rest.1 ?? "en", items: first.2,
            eta: F.now.addingTimeInterval(TimeInterval(rest.0)), state: first.0, version: 2,
            barista: names.1, pickupPoint: names.2, placedAt: F.now, updatedAt: F.now)
    }

    @Test("every family text fits its budget") func everyFamilyTextFitsItsBudget() async {
        await propertyCheck(count: 300, input: Self.order, Self.text) { order, store in
            let state = OrderProjector.contentState(
                order: order, storeName: store, timeZone: F.losAngeles, now: F.now, locale: order.locale)
            F.expectWithinBudgets(state)
            #expect(state.status.rawValue == order.state.rawValue)
            let attributes = OrderProjector.attributes(order: order, storeName: store, locale: order.locale)
            #expect(DisplayWidth.columns(of: attributes.storeName) <= FamilyBudget.storeName)
            #expect(DisplayWidth.columns(of: attributes.customerName) <= FamilyBudget.customerName)
            #expect(DisplayWidth.columns(of: attributes.itemsSummary) <= FamilyBudget.itemsSummary)
        }
    }

    @Test("every body fits is valid JSON and keeps the status and the 2001 epoch") func everyBodyFitsIsValidJSONAndKeepsTheStatusAndThe2001Epoch() async {
        var fitted = 0
        await propertyCheck(count: 150, input: Self.order, Self.text) { order, store in
            for (name, body) in F.allBodies(order, storeName: store) {
                #expect(body.json.count <= APNsBody.maxBytes, "\(name): \(body.json.count) bytes")
                if !body.droppedFields.isEmpty || body.textByteCap != nil { fitted += 1 }
                guard let object = try? F.jsonObject(body.json), let aps = object["aps"] as? [String: Any] else {
                    Issue.record("\(name) is not a JSON object with aps")
                    continue
                }
                guard name.hasPrefix("liveactivity") else { continue }
                #expect((aps["timestamp"] as? Int) == Int(F.now.timeIntervalSince1970))
                guard let stateObject = aps["content-state"] as? [String: Any] else {
                    Issue.record("\(name) has no content-state")
                    continue
                }
                #expect(stateObject["status"] as? String == order.state.rawValue, "\(name)")
                #expect(stateObject["eta"] as? Double == order.eta.timeIntervalSinceReferenceDate, "\(name)")
                if let end = (stateObject["compactTrailing"] as? [String: Any])?["countdownEnd"] {
                    #expect(end as? Double == order.eta.timeIntervalSinceReferenceDate)
                }
                let decoded = try JSONDecoder().decode(
                    OrderActivityAttributes.ContentState.self, from: JSONSerialization.data(withJSONObject: stateObject))
                #expect(decoded.eta == order.eta)
            }
        }
        // The generator's stacks of combining marks are heavy enough that fitting is exercised, not assumed.
        #expect(fitted > 0)
    }
}
