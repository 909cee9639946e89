import CremaAPNsProtocol
import CremaActivityModels
@testable import CremaCore
import Foundation
import Testing

/// The receipt in every body (issue #47): a placeholder as long as a receipt where the planner writes it, replaced
/// whole at sending, and an addition to the content state that apps built before it decode past.
@Suite struct DeliveryReceiptTests {
    typealias F = ActivityFixtures

    static let receipt = DeliveryReceipt(deliveryID: 0x0102_0304_0506_0708, orderID: UUID(uuidString: "8c4b0b51-6a36-4c55-9a0f-4f2e3c1d2b10")!)
    /// A receipt's text as the edge seals it; any 24 bytes and 16 do for the layout.
    static let text = DeliveryReceipt.text(sealed: receipt.fields, tag: Array(0..<UInt8(DeliveryReceipt.tagLength)))

    @Test("a receipt's fields and wire parts read back to what was laid out") func aReceiptsFieldsAndWirePartsReadBack() throws {
        #expect(DeliveryReceipt(fields: Self.receipt.fields) == Self.receipt)
        #expect(Self.text.utf8.count == DeliveryReceipt.length)
        let parts = try #require(DeliveryReceipt.parts(of: Self.text))
        #expect(parts.sealed == Self.receipt.fields && parts.tag == Array(0..<UInt8(DeliveryReceipt.tagLength)))
    }

    @Test("text that is not a receipt reads as none", arguments: ["", "abc", String(repeating: "!", count: DeliveryReceipt.length)])
    func textThatIsNotAReceiptReadsAsNone(_ text: String) {
        #expect(DeliveryReceipt.parts(of: text) == nil)
    }

    @Test("every body carries the placeholder where the receipt goes", arguments: ["en", "es", "ja"])
    func everyBodyCarriesThePlaceholderWhereTheReceiptGoes(_ locale: String) throws {
        for (name, body) in F.allBodies(F.order(.preparing, locale: locale)) {
            let object = try F.jsonObject(body.json)
            let crema = try #require(object["crema"] as? [String: Any], "\(name) has no crema key")
            #expect(crema["receipt"] as? String == DeliveryReceipt.placeholder, "\(name)")
            if let aps = object["aps"] as? [String: Any], let state = aps["content-state"] as? [String: Any] {
                #expect(state["receipt"] as? String == DeliveryReceipt.placeholder, "\(name)")
            }
        }
    }

    @Test("an alert body lets the Notification Service Extension run") func anAlertBodyLetsTheNotificationServiceExtensionRun() throws {
        let body = APNsBodyBuilder.alert(for: .ready, order: F.order(.ready), storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en")
        let aps = try #require(try F.jsonObject(body.json)["aps"] as? [String: Any])
        #expect(aps["mutable-content"] as? Int == 1)
    }

    @Test("filling puts the receipt in every place of the placeholder and nowhere else")
    func fillingPutsTheReceiptInEveryPlaceOfThePlaceholderAndNowhereElse() throws {
        let order = F.order(.ready, locale: "en")
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en", event: .update, alertFor: .ready)
        let filled = DeliveryReceipt.filling(body.string, with: Self.text)
        #expect(filled.utf8.count == body.json.count)
        #expect(!filled.contains(DeliveryReceipt.placeholder))
        #expect(filled.components(separatedBy: Self.text).count == 3)  // crema.receipt and content-state.receipt
        #expect(filled.replacingOccurrences(of: Self.text, with: DeliveryReceipt.placeholder) == body.string)
    }

    @Test("a customer's text that spells the placeholder member is left alone")
    func aCustomersTextThatSpellsThePlaceholderMemberIsLeftAlone() throws {
        let hostile = #""receipt":""# + DeliveryReceipt.placeholder + #"""#
        var order = F.order(.preparing, locale: "en")
        order.displayName = hostile
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en", event: .start, alertFor: nil)
        #expect(body.string.contains(#"\"receipt\":\""#))
        let filled = DeliveryReceipt.filling(body.string, with: Self.text)
        // crema.receipt and the content state's: the escaped text in the attributes and the alert is not a member.
        #expect(filled.components(separatedBy: Self.text).count == 3)
        #expect(try F.jsonObject(Data(filled.utf8))["crema"] != nil)
    }

    /// The content state as apps built before receipts declare it: the same fields, no `receipt`.
    struct ContentStateBeforeReceipts: Decodable, Equatable {
        var status: OrderActivityStatus
        var step: Int
        var stepCount: Int
        var eta: Date
        var pickupPoint: String?
        var baristaName: String?
        var symbolName: String
        var progress: Double
        var compactLeading: OrderActivityAttributes.ContentState.CompactLeading
        var compactTrailing: OrderActivityAttributes.ContentState.CompactTrailing
        var minimal: OrderActivityAttributes.ContentState.Minimal
        var small: OrderActivityAttributes.ContentState.Small
        var lockScreen: OrderActivityAttributes.ContentState.LockScreen
    }

    @Test("an app model built before receipts decodes every golden content state", arguments: GoldenBodyTests.cases.filter { $0.event != nil })
    func anAppModelBuiltBeforeReceiptsDecodesEveryGoldenContentState(_ c: GoldenBodyTests.Case) throws {
        let data = try Data(contentsOf: GoldenBodyTests.golden.appendingPathComponent("\(c.name).en.json"))
        let aps = try #require(try F.jsonObject(data)["aps"] as? [String: Any])
        let stateJSON = try JSONSerialization.data(withJSONObject: try #require(aps["content-state"]))
        #expect((try JSONSerialization.jsonObject(with: stateJSON) as? [String: Any])?["receipt"] != nil)
        let old = try JSONDecoder().decode(ContentStateBeforeReceipts.self, from: stateJSON)
        let new = try JSONDecoder().decode(OrderActivityAttributes.ContentState.self, from: stateJSON)
        #expect(old.status == new.status && old.lockScreen == new.lockScreen && old.eta == new.eta)
        #expect(new.receipt == DeliveryReceipt.placeholder)
    }
}
