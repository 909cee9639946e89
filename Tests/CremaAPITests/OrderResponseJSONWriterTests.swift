import CremaAPI
import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// The answer to every order command is written without `JSONEncoder`; these hold its bytes to `WireCoding.encoder`'s
/// for orders in every state, with each optional absent or present, text that needs escapes (slashes stay bare on
/// the API), items of every shape, and the read-only `events` and `projection` spliced in.
@Suite struct OrderResponseJSONWriterTests {
    static let texts = ["Ana", "", "María / José", "\"Sam\" \\ the barista", "line\nbreak\ttab\u{1}\u{1F}\u{7F}", "さくら", "☕️👨‍👩‍👧‍👦", "</script>"]

    static func order(_ index: Int, state: OrderState) -> Order {
        let text = { (offset: Int) in texts[(index + offset) % texts.count] }
        let optional = { (offset: Int) in (index + offset) % 3 == 0 ? nil : text(offset) }
        let items: [OrderItem] = (0..<(index % 4)).map { n in
            OrderItem(
                name: text(n), size: n % 2 == 0 ? nil : text(n + 1), quantity: n + 1,
                modifiers: (0..<(n + index) % 3).map { text($0 + 2) })
        }
        let base = Date(timeIntervalSince1970: 1_795_000_000)
        let id = UUID(uuid: (
            UInt8(index), 0x1c, 0x2a, 0x9e, 0x8b, 0x7d, 0x4c, 0x6e, 0x9a, 0x5f, 0x0d, 0x1e, 0x2f, 0x3a, 0x4b, UInt8(255 - index)))
        return Order(
            id: id, storeID: "market-st/\(index)", number: [1, 42, 99_999, Int.max][index % 4], posRef: text(1), customerRef: optional(2),
            displayName: text(3), locale: ["en", "es-MX", "ja"][index % 3], items: items,
            eta: base.addingTimeInterval(Double(index) * 61.0123), state: state, version: index + 1,
            barista: optional(4), pickupPoint: optional(5), delayReason: optional(6), cancelReason: optional(7),
            placedAt: base.addingTimeInterval(-0.0005 * Double(index)), updatedAt: base.addingTimeInterval(0.9996))
    }

    static func expectSameBytes(_ response: OrderResponse, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let written = try response.wireJSON()
        let encoded = String(decoding: try WireCoding.encoder.encode(response), as: UTF8.self)
        #expect(written == encoded, sourceLocation: sourceLocation)
        #expect(Array(written.utf8) == Array(encoded.utf8), sourceLocation: sourceLocation)
    }

    @Test("an answer in every state, with each optional absent or present, is written as the encoder writes it")
    func anAnswerInEveryStateIsWrittenAsTheEncoderWritesIt() throws {
        var answers = 0
        for state in OrderState.allCases {
            for index in 0..<48 {
                try Self.expectSameBytes(OrderResponse(Self.order(index, state: state)))
                answers += 1
            }
        }
        #expect(answers == OrderState.allCases.count * 48)
    }

    @Test("an order read with its history and projection is written as the encoder writes it")
    func anOrderReadWithItsHistoryAndProjectionIsWrittenAsTheEncoderWritesIt() throws {
        let at = Date(timeIntervalSince1970: 1_795_000_000.25)
        let events = [
            RecordedEvent(version: 1, type: .placed, role: .pos, occurredAt: at, data: ["eta": "2026-11-26T14:40:00.000Z", "n": .number(1.5)]),
            RecordedEvent(version: 2, type: .started, role: .barista, occurredAt: at, data: ["barista": "Sam / \"S\"", "z": nil, "a": [true, 3]]),
        ]
        let projections: [JSONValue??] = [nil, .some(nil), .some(["status": "ready", "progress": 1, "small": ["title": "#42 · a/b"]])]
        for (index, projection) in projections.enumerated() {
            for history in [nil, [], events] as [[RecordedEvent]?] {
                try Self.expectSameBytes(OrderResponse(Self.order(index, state: .preparing), events: history, projection: projection))
            }
        }
    }
}
