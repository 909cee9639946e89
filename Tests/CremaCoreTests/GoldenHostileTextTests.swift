import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

/// Issue #16: text that reaches a Lock Screen cannot be reordered or hidden. The same orders as the golden
/// files, with every client-sent text laced with bidirectional overrides, zero-width characters, soft hyphens
/// and line separators, must give the golden files' bytes exactly.
@Suite struct GoldenHostileTextTests {
    typealias F = ActivityFixtures

    /// Every character the core removes, and the separators it reads as spaces.
    static let invisible: [String] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200B}", "\u{200C}", "\u{200D}", "\u{200E}", "\u{200F}", "\u{2060}", "\u{2061}", "\u{2062}", "\u{2063}",
        "\u{2064}", "\u{FEFF}", "\u{00AD}",
    ]

    /// `Ana` → `\u{202A}A\u{202B}n\u{202C}a\u{202D}`, spaces → U+2028 or U+2029.
    static func laced(_ text: String, offset: Int = 0) -> String {
        var result = ""
        for (index, character) in text.enumerated() {
            result += invisible[(index + offset) % invisible.count]
            result += character == " " ? (index.isMultiple(of: 2) ? "\u{2028}" : "\u{2029}") : String(character)
        }
        return result + invisible[(text.count + offset) % invisible.count]
    }

    static func hostile(_ order: Order) -> Order {
        var order = order
        order.displayName = laced(order.displayName)
        order.barista = order.barista.map { laced($0, offset: 5) }
        order.pickupPoint = order.pickupPoint.map { laced($0, offset: 9) }
        order.items = order.items.map { item in
            var item = item
            item.name = laced(item.name, offset: 13)
            item.size = item.size.map { laced($0, offset: 17) }
            return item
        }
        return order
    }

    @Test("hostile text gives the golden file byte for byte", arguments: GoldenBodyTests.cases, ["en", "es", "ja"])
    func hostileTextGivesTheGoldenFileByteForByte(_ c: GoldenBodyTests.Case, _ locale: String) throws {
        let order = Self.hostile(F.order(c.state, locale: locale, eta: c.eta))
        #expect(order.displayName.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) })
        let storeName = Self.laced(F.storeName, offset: 3)
        let body: APNsBody
        if let event = c.event {
            body = APNsBodyBuilder.liveActivity(
                order: order, storeName: storeName, timeZone: F.losAngeles, now: F.now, locale: locale,
                event: event, alertFor: c.alertFor)
        } else {
            body = APNsBodyBuilder.alert(
                for: c.alertFor!, order: order, storeName: storeName, timeZone: F.losAngeles, now: F.now, locale: locale)
        }
        let file = GoldenBodyTests.golden.appendingPathComponent("\(c.name).\(locale).json")
        let expected = try Data(contentsOf: file)
        #expect(body.json == expected, "\(file.lastPathComponent) differs:\n\(body.string)")
    }

    @Test("bidirectional controls, invisible characters and soft hyphens are removed; separators read as spaces",
          arguments: [
            ("\u{202E}anA\u{202C}", "anA"), ("A\u{200B}na", "Ana"), ("Ana\u{2028}Bell", "Ana Bell"), ("Ana\u{2029}", "Ana "),
            ("\u{2066}Sam\u{2069}", "Sam"), ("\u{FEFF}Ana", "Ana"), ("co\u{00AD}unter", "counter"), ("a\u{2060}\u{2064}b", "ab"),
            ("\u{200E}\u{200F}\u{200C}\u{200D}x", "x"), ("👩\u{200D}💻", "👩\u{200D}💻"), ("さくら", "さくら"),
          ])
    func displayTextKeepsOnlyWhatIsSeen(_ sample: (String, String)) {
        #expect(DisplayText.visible(sample.0) == sample.1)
    }

    @Test("a name that is only invisible characters shows no name") func aNameThatIsOnlyInvisibleCharactersShowsNoName() {
        var order = F.order(.queued)
        order.displayName = "\u{202E}\u{200B}\u{2028}"
        let attributes = OrderProjector.attributes(order: order, storeName: F.storeName, locale: "en")
        #expect(attributes.customerName == "")
    }
}
