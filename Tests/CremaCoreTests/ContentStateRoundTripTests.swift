import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

/// The app decodes `content-state` and `attributes` with a plain `JSONDecoder`, as ActivityKit does.
@Suite struct ContentStateRoundTripTests {
    typealias F = ActivityFixtures

    @Test("the content state in a body decodes with a plain decoder to what was projected", arguments: OrderState.allCases, ["en", "es", "ja"])
    func theContentStateInABodyDecodesWithAPlainDecoderToWhatWasProjected(_ state: OrderState, _ locale: String) throws {
        let order = F.order(state, locale: locale)
        let projected = F.contentState(order)
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: locale,
            event: .start, alertFor: nil)
        let aps = try #require(F.jsonObject(body.json)["aps"] as? [String: Any])
        let stateJSON = try JSONSerialization.data(withJSONObject: try #require(aps["content-state"]))
        var decoded = try JSONDecoder().decode(OrderActivityAttributes.ContentState.self, from: stateJSON)
        // The body carries the receipt's placeholder, filled in at sending; the rest is the projection.
        #expect(decoded.receipt == DeliveryReceipt.placeholder)
        decoded.receipt = nil
        #expect(decoded == projected)
        #expect(decoded.eta == order.eta)
        let attributesJSON = try JSONSerialization.data(withJSONObject: try #require(aps["attributes"]))
        let attributes = try JSONDecoder().decode(OrderActivityAttributes.self, from: attributesJSON)
        #expect(attributes == OrderProjector.attributes(order: order, storeName: F.storeName, locale: locale))
    }

    /// The body's bytes themselves, not a re-serialization, decode into the app's types.
    struct Envelope: Decodable {
        struct APS: Decodable {
            var contentState: OrderActivityAttributes.ContentState
            var attributes: OrderActivityAttributes?
            enum CodingKeys: String, CodingKey {
                case contentState = "content-state"
                case attributes
            }
        }
        var aps: APS
    }

    @Test("the raw body decodes with a plain decoder", arguments: LiveActivityEvent.allCases, ["en", "es", "ja"])
    func theRawBodyDecodesWithAPlainDecoder(_ event: LiveActivityEvent, _ locale: String) throws {
        let order = F.order(event == .end ? .pickedUp : .preparing, locale: locale)
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: locale,
            event: event, alertFor: nil)
        var envelope = try JSONDecoder().decode(Envelope.self, from: body.json)
        #expect(envelope.aps.contentState.receipt == DeliveryReceipt.placeholder)
        envelope.aps.contentState.receipt = nil
        #expect(envelope.aps.contentState == F.contentState(order))
        #expect((envelope.aps.attributes != nil) == (event == .start))
    }

    @Test("a plain encoder writes dates as seconds since 2001") func aPlainEncoderWritesDatesAsSecondsSince2001() throws {
        let state = F.contentState(F.order(.queued))
        let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any])
        #expect(object["eta"] as? Double == state.eta.timeIntervalSince1970 - 978_307_200)
    }

    @Test("absent optional fields decode as nil") func absentOptionalFieldsDecodeAsNil() throws {
        let json = #"""
            {"status":"picked_up","step":3,"stepCount":3,"eta":816692700,"symbolName":"checkmark.circle.fill",
             "progress":1,"compactLeading":{"text":"#42"},"compactTrailing":{"text":"✓"},"minimal":{},
             "small":{"title":"#42","status":"Picked up · enjoy!"},"lockScreen":{"title":"Enjoy!","subtitle":"Thanks"}}
            """#
        let state = try JSONDecoder().decode(OrderActivityAttributes.ContentState.self, from: Data(json.utf8))
        #expect(state.status == .pickedUp)
        #expect(state.pickupPoint == nil && state.minimal.text == nil && state.lockScreen.detail == nil)
        #expect(state.eta == Date(timeIntervalSinceReferenceDate: 816_692_700))
    }

    /// What an app woken by a push-to-start needs to register the new activity's token with Crema.
    @Test("every live activity body names its order next to APS and the starts attributes agree", arguments: LiveActivityEvent.allCases)
    func everyLiveActivityBodyNamesItsOrderNextToAPSAndTheStartsAttributesAgree(_ event: LiveActivityEvent) throws {
        struct Body: Decodable {
            struct APS: Decodable { var attributes: OrderActivityAttributes? }
            var aps: APS
            var crema: OrderActivityIdentity
        }
        let order = F.order(event == .end ? .canceled : .queued)
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en",
            event: event, alertFor: nil)
        let decoded = try JSONDecoder().decode(Body.self, from: body.json)
        let expected = OrderActivityIdentity(orderID: order.id.uuidString.lowercased(), storeID: order.storeID, number: order.number)
        var identity = decoded.crema
        // The push's receipt goes beside the order's ids (the attributes, which last the activity's life, hold none).
        #expect(identity.receipt == DeliveryReceipt.placeholder)
        identity.receipt = nil
        #expect(identity == expected)
        #expect(decoded.aps.attributes?.identity == (event == .start ? expected : nil))
        let crema = try #require(F.jsonObject(body.json)["crema"] as? [String: Any])
        #expect(Set(crema.keys) == ["order_id", "store_id", "number", "receipt"])
    }

    @Test("the attributes round trip through a plain encoder and decoder") func theAttributesRoundTripThroughAPlainEncoderAndDecoder() throws {
        let attributes = OrderActivityAttributes(
            orderID: "3f1c2a9e-8b7d-4c6e-9a5f-0d1e2f3a4b5c", storeID: "market-st", storeName: "Market St", orderNumber: 42,
            customerName: "Sam", itemsSummary: "Flat white")
        let data = try JSONEncoder().encode(attributes)
        #expect(try JSONDecoder().decode(OrderActivityAttributes.self, from: data) == attributes)
        let keys = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any]).keys
        #expect(Set(keys) == ["orderID", "storeID", "storeName", "orderNumber", "customerName", "itemsSummary"])
        let identity = attributes.identity
        #expect(try JSONDecoder().decode(OrderActivityIdentity.self, from: JSONEncoder().encode(identity)) == identity)
    }
}
