import CremaAPI
import Foundation
import Testing

/// Idempotency compares the canonical text of every order request, and texts stored by an earlier `crema` must still
/// match: the direct writer's bytes are held to `WireCoding.canonical`'s for requests with every optional absent or
/// present, text that needs escapes (slashes stay bare), and timestamps that round to the millisecond.
@Suite struct OrderRequestJSONWriterTests {
    static let texts = ["Ana", "", "María / José", "\"Sam\" \\ the barista", "line\nbreak\ttab\u{1}\u{1F}\u{7F}", "さくら", "☕️👨‍👩‍👧‍👦", "</script>"]
    static let base = Date(timeIntervalSince1970: 1_795_000_000)

    static func text(_ index: Int) -> String { texts[index % texts.count] }
    static func optional(_ index: Int) -> String? { index % 3 == 0 ? nil : text(index) }

    @Test("a placement with each optional absent or present is written as the encoder writes it")
    func aPlacementWithEachOptionalAbsentOrPresentIsWrittenAsTheEncoderWritesIt() throws {
        for index in 0..<96 {
            let items = (0..<(index % 4)).map { n in
                ItemRequest(
                    name: Self.text(index + n), size: Self.optional(index + n + 1), quantity: (index + n) % 3 == 0 ? nil : [1, 12, -3][n % 3],
                    modifiers: (index + n) % 2 == 0 ? nil : (0..<n).map { Self.text($0 + index) })
            }
            let request = PlaceOrderRequest(
                storeID: "market-st/\(index)", posRef: Self.text(index + 1), customerRef: Self.optional(index + 2), displayName: Self.text(index + 3),
                locale: ["en", "es-MX", "ja"][index % 3], items: items, eta: Self.base.addingTimeInterval(Double(index) * 61.0123 - 0.0005))
            let written = request.canonicalJSON()
            #expect(Array(written.utf8) == Array(try WireCoding.canonical(request).utf8), "\(written)")
        }
    }

    @Test("an event request with each optional absent or present is written as the encoder writes it")
    func anEventRequestWithEachOptionalAbsentOrPresentIsWrittenAsTheEncoderWritesIt() throws {
        for index in 0..<96 {
            let request = OrderEventRequest(
                type: ["started", "delayed", "ready", "picked_up", "canceled", "\"odd\""][index % 6],
                expectedVersion: index % 4 == 0 ? nil : [1, 7, -2, Int.max][index % 4], barista: Self.optional(index),
                eta: index % 5 == 0 ? nil : Self.base.addingTimeInterval(Double(index) * 0.3337), reason: Self.optional(index + 1),
                pickupPoint: Self.optional(index + 2))
            let written = request.canonicalJSON()
            #expect(Array(written.utf8) == Array(try WireCoding.canonical(request).utf8), "\(written)")
        }
    }
}
