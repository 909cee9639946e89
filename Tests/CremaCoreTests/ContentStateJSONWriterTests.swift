import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import PropertyBased
import Testing

/// The stored projection is written without `JSONEncoder`; these hold its bytes to the encoder's (`.sortedKeys`, the
/// default escaping and date strategy) for the projector's own states and for hand-built ones with every optional
/// absent or present and text that needs escapes.
@Suite struct ContentStateJSONWriterTests {
    typealias F = ActivityFixtures
    typealias State = OrderActivityAttributes.ContentState

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func expectSameBytes(_ state: State, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var writer = JSONWriter(escapingSlashes: true)
        try state.encode(to: &writer)
        let encoded = try encoder.encode(state)
        #expect(writer.text == String(decoding: encoded, as: UTF8.self), sourceLocation: sourceLocation)
        #expect(writer.bytes == Array(encoded), sourceLocation: sourceLocation)
    }

    @Test("the projector's state of any order, in every state and language, is written as the encoder writes it")
    func theProjectorsStateOfAnyOrderIsWrittenAsTheEncoderWritesIt() async throws {
        var statuses: Set<OrderActivityStatus> = []
        var languages: Set<String> = []
        await propertyCheck(count: 100, input: ProjectionPropertyTests.order, ProjectionPropertyTests.text) { order, store in
            for locale in [order.locale, "en", "es", "ja"] {
                let state = OrderProjector.contentState(order: order, storeName: store, timeZone: F.losAngeles, now: F.now, locale: locale)
                try Self.expectSameBytes(state)
                statuses.insert(state.status)
                languages.insert(locale)
            }
        }
        #expect(statuses == Set(OrderActivityStatus.allCases))
        #expect(languages.isSuperset(of: ["en", "es", "ja"]))
    }

    /// Text the projector would never write (controls, quotes, slashes, lone combining marks) but a writer must escape.
    static let text = Gen<String?>.element(of: [
        "a", "Oat latte", "/", "\\", "\"", "\n", "\r\n", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{B}", "\u{C}", "\u{1F}", "\u{7F}",
        "é", "日本", "あと5分", "😀", "👨‍👩‍👧‍👦", "\u{2028}", "\u{FEFF}", "e\u{301}", " ", "1/2", "</script>",
    ]).map { $0 ?? "" }.array(of: 0...12).map { $0.joined() }

    /// Seconds since 2001 with and without a fraction, around today's and far from it.
    static let date = Gen.double(in: -1e9...2e9).map { Date(timeIntervalSinceReferenceDate: ($0 * 1000).rounded() / 1000) }

    static let state = zip(
        zip(Gen<OrderActivityStatus>.case, Gen.int(in: -1...9), Gen.int(in: 0...9), date, Gen.double(in: 0...1)),
        zip(text.optional, text.optional, text, text, text, date.optional),
        zip(text.optional, text, text, text, text),
        zip(text.optional, text.optional, text.optional)
    ).map { head, names, texts, lock in
        State(
            status: head.0, step: head.1, stepCount: head.2, eta: head.3, pickupPoint: names.0, baristaName: names.1,
            symbolName: names.2, progress: head.4,
            compactLeading: .init(text: names.3), compactTrailing: .init(text: names.4, countdownEnd: names.5),
            minimal: .init(text: texts.0), small: .init(title: texts.1, status: texts.2),
            lockScreen: .init(title: texts.3, subtitle: texts.4, detail: lock.0, etaRelative: lock.1, etaAbsolute: lock.2))
    }

    @Test("any state, with escapes, slashes and each optional absent or present, is written as the encoder writes it")
    func anyStateIsWrittenAsTheEncoderWritesIt() async throws {
        var absent = 0
        var present = 0
        await propertyCheck(count: 1000, input: Self.state) { state in
            try Self.expectSameBytes(state)
            if state.baristaName == nil, state.lockScreen.detail == nil, state.minimal.text == nil { absent += 1 }
            if state.pickupPoint != nil, state.compactTrailing.countdownEnd != nil, state.lockScreen.etaAbsolute != nil { present += 1 }
        }
        #expect(absent > 0)
        #expect(present > 0)
    }

    @Test("a progress that is not a number is refused, as the encoder refuses it")
    func aProgressThatIsNotANumberIsRefused() throws {
        var state = F.contentState(F.order(.preparing))
        state.progress = .nan
        var writer = JSONWriter(escapingSlashes: true)
        #expect(throws: JSONWriterError.nonFiniteNumber) { try state.encode(to: &writer) }
        #expect(throws: EncodingError.self) { try Self.encoder.encode(state) }
    }
}
