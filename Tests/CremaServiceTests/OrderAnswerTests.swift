import CremaAPI
import CremaCore
import CremaService
import Foundation
import Testing

/// The answer to every order command is written by the service without `JSONEncoder` (`OrderAnswer`); these hold its
/// bytes to what `WireCoding.encoder` writes for the API's `OrderResponse`, for orders in every state, with each
/// optional absent or present, text that needs escapes (slashes stay bare on the API) and items of every shape.
@Suite struct OrderAnswerTests {
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

    @Test("an answer in every state, with each optional absent or present, is written as the encoder writes it")
    func anAnswerInEveryStateIsWrittenAsTheEncoderWritesIt() throws {
        var answers = 0
        for state in OrderState.allCases {
            for index in 0..<48 {
                let order = Self.order(index, state: state)
                let written = OrderAnswer.json(order)
                let encoded = String(decoding: try WireCoding.encoder.encode(OrderResponse(order)), as: UTF8.self)
                #expect(written == encoded)
                #expect(Array(written.utf8) == Array(encoded.utf8))
                answers += 1
            }
        }
        #expect(answers == OrderState.allCases.count * 48)
    }
}
