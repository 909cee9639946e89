import CremaAPI
import CremaCore
import CremaService
import Foundation
import Testing

/// `order.changed` bodies are spliced around the command's stored answer instead of encoding the order a second time,
/// and `activity.ended` bodies are written directly (`OrderWebhookBody`); receivers verify signatures over these bytes,
/// so both must be exactly what the encoder writes for the API's `WebhookEnvelope`.
@Suite struct OrderWebhookBodyTests {
    static func order(displayName: String, at: Date) throws -> Order {
        let placed = try OrderStateMachine.place(
            OrderPlacement(
                storeID: "market-st", posRef: "T-1/\"quoted\"", customerRef: "café-7", displayName: displayName, locale: "es",
                items: [OrderItem(name: "Oat latte", size: "grande", modifiers: ["extra shot", "½ sweet"])], eta: at.addingTimeInterval(300)),
            id: UUID(), number: 42, at: at)
        let started = try OrderStateMachine.apply(.started(barista: "Sam"), to: placed, expectedVersion: nil, at: at)
        return try OrderStateMachine.apply(.delayed(eta: at.addingTimeInterval(600), reason: "milk run / \"oat\""), to: started, expectedVersion: nil, at: at)
    }

    @Test("the spliced order changed body is the bytes the encoder writes for the envelope", arguments: [
        ("Ana", 1_795_000_000.0),
        ("Zoë \"Z\" O'Neil \\ 😀", 1_795_000_000.0005),
        ("山田", 1_795_000_123.9996),
    ])
    func theSplicedOrderChangedBodyIsTheBytesTheEncoderWritesForTheEnvelope(displayName: String, seconds: Double) throws {
        let at = Date(timeIntervalSince1970: seconds)
        let order = try Self.order(displayName: displayName, at: at)
        let id = UUID()
        let spliced = OrderWebhookBody.orderChanged(id: id, createdAt: at, answer: OrderAnswer.json(order))

        let encoded = try WireCoding.encoder.encode(
            WebhookEnvelope(id: id.uuidString.lowercased(), type: "order.changed", createdAt: at, data: OrderChangedData(order: OrderResponse(order))))
        #expect(spliced == String(decoding: encoded, as: UTF8.self))
    }

    @Test("the written activity ended body is the bytes the encoder writes for the envelope", arguments: [
        ("picked_up", 1_795_000_000.0), ("canceled", 1_795_000_000.0005), ("\"odd\" / state", 1_795_000_123.9996),
    ])
    func theWrittenActivityEndedBodyIsTheBytesTheEncoderWritesForTheEnvelope(state: String, seconds: Double) throws {
        let at = Date(timeIntervalSince1970: seconds)
        let id = UUID()
        let orderID = UUID()
        let activity = ActivityEndedData.Activity(
            orderID: orderID.uuidString.lowercased(), storeID: "market-st/2 \"north\"", state: state, endedBy: "expired", endedAt: at)
        let written = OrderWebhookBody.activityEnded(
            id: id, createdAt: at.addingTimeInterval(0.25), orderID: orderID, storeID: activity.storeID, state: state, endedBy: "expired", endedAt: at)
        let encoded = try WireCoding.encoder.encode(
            WebhookEnvelope(id: id.uuidString.lowercased(), type: "activity.ended", createdAt: at.addingTimeInterval(0.25), data: ActivityEndedData(activity: activity)))
        #expect(Array(written.utf8) == Array(encoded))
    }
}
