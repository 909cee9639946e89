import CremaAPNsProtocol
import CremaActivityModels
@testable import CremaCore
import Foundation
import PropertyBased
import Testing

/// Push bodies are written without `JSONEncoder`; these hold every draft the fitter writes, and the fitted body with
/// its dropped fields and text cap, to what `APNsPayload.encode` gives for the same push: for the projector's own pushes
/// and for hand-built ones with every optional absent or present, text that needs escapes, and texts large enough to
/// force every drop and every cap.
@Suite struct APNsBodyJSONWriterTests {
    typealias F = ActivityFixtures

    /// Pieces of text: what needs an escape (and `/`, which push bodies leave as it is) and what is many bytes per
    /// character.
    static let escapes: [String] = [
        "a", "Oat latte", "/", "\\", "\"", "\n", "\r\n", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{B}", "\u{C}", "\u{1F}", "\u{7F}",
        "é", "日本", "あと5分", "😀", "👨‍👩‍👧‍👦", "\u{2028}", "\u{FEFF}", "e\u{301}", " ", "1/2", "</script>", "…",
    ]

    /// The same and the projector's heavy names (hundreds of bytes for one character).
    static let pieces = escapes + ProjectionPropertyTests.heavy

    /// Text as the identifiers are: short, since the fitter never cuts them (a body is only as large as they leave room).
    static let shortText = Gen<String?>.element(of: escapes).map { $0 ?? "" }.array(of: 0...4).map { $0.joined() }

    /// Heavy pieces, repeated until one text alone can be kilobytes.
    static let largeText = zip(
        Gen<String?>.element(of: pieces).map { $0 ?? "" }.array(of: 1...10).map { $0.joined() },
        Gen<Int?>.element(of: [1, 2, 8, 30]).map { $0 ?? 1 }
    ).map { text, times in String(repeating: text, count: times) }

    /// One text in six is large: a body has 18 texts, so some fit as drafted and the rest need a drop, a few drops
    /// or every drop and a cut.
    static let text = zip(Gen<String?>.element(of: escapes).map { $0 ?? "" }.array(of: 0...10).map { $0.joined() }, largeText, Gen.int(in: 0...5))
        .map { small, large, roll in roll == 0 ? large : small }

    /// Seconds since 2001 with and without a fraction.
    static let date = Gen.double(in: -1e9...2e9).map { Date(timeIntervalSinceReferenceDate: ($0 * 1000).rounded() / 1000) }

    static let state = zip(
        zip(Gen<OrderActivityStatus>.case, Gen.int(in: -1...9), Gen.int(in: 0...9), date, Gen.double(in: 0...1)),
        zip(text.optional, text.optional, text, text, text, date.optional),
        zip(text.optional, text, text, text, text),
        zip(text.optional, text.optional, text.optional)
    ).map { head, names, texts, lock in
        OrderActivityAttributes.ContentState(
            status: head.0, step: head.1, stepCount: head.2, eta: head.3, pickupPoint: names.0, baristaName: names.1,
            symbolName: names.2, progress: head.4,
            compactLeading: .init(text: names.3), compactTrailing: .init(text: names.4, countdownEnd: names.5),
            minimal: .init(text: texts.0), small: .init(title: texts.1, status: texts.2),
            lockScreen: .init(title: texts.3, subtitle: texts.4, detail: lock.0, etaRelative: lock.1, etaAbsolute: lock.2))
    }

    static let alertText = zip(text, text).map { AlertText(title: $0, body: $1) }

    static let attributes = zip(shortText, shortText, text, Gen.int(in: -5...99_999), text, text).map {
        OrderActivityAttributes(orderID: $0, storeID: $1, storeName: $2, orderNumber: $3, customerName: $4, itemsSummary: $5)
    }

    static let kind = zip(Gen<LiveActivityEvent>.case, attributes, alertText, alertText.optional).map {
        event, attributes, alert, optionalAlert -> LiveActivityPush.Kind in
        switch event {
        case .start: .start(attributes: attributes, alert: alert)
        case .update: .update(alert: optionalAlert)
        case .end: .end(alert: optionalAlert)
        }
    }

    /// Whole and fractional scores, and ones JSON cannot carry (the builder leaves those out).
    static let score = Gen<Double??>.element(of: [nil, 0, 1, 25, 99.5, 100, 0.1, 1e-7, 12.345678901, 1e16, .nan, .infinity, -3])
        .map { $0 ?? nil }

    /// Unix times around today's, far from it, and beyond what a JSON number carries (sent as 0 or left out).
    static let instant = Gen<Double?>.element(of: [1_795_000_000, 1_795_000_000.75, -1, 0, 1e300, -1e300])
        .map { Date(timeIntervalSince1970: $0 ?? 0) }

    static let sound = Gen<String??>.element(of: [nil, "default", "chime/1.caf", "a\"b"]).map { $0 ?? nil }

    static let identity = zip(shortText, shortText, Gen.int(in: -5...99_999)).map { OrderActivityIdentity(orderID: $0, storeID: $1, number: $2) }

    static let push = zip(
        zip(kind, state, instant, instant.optional, instant.optional),
        zip(score, sound, identity.optional)
    ).map { first, rest in
        LiveActivityPush(
            kind: first.0, contentState: first.1, timestamp: first.2, staleDate: first.3, dismissalDate: first.4,
            relevanceScore: rest.0, sound: rest.1, identity: rest.2)
    }

    /// What the builder makes with `APNsPayload.encode` writing each draft, each draft's own bytes checked against the
    /// body's writer on the way.
    static func encoded(_ push: LiveActivityPush, drafts: inout Int, sourceLocation: SourceLocation = #_sourceLocation) -> APNsBody {
        APNsBodyBuilder.liveActivity(push) { body in
            let expected = APNsPayload.encode(body)
            let written = APNsPayload.write { (writer: inout JSONWriter) throws(JSONWriterError) in try body.encode(to: &writer) }
            #expect(
                written == expected,
                "\(String(decoding: written, as: UTF8.self))\nexpected:\n\(String(decoding: expected, as: UTF8.self))",
                sourceLocation: sourceLocation)
            drafts += 1
            return expected
        }
    }

    /// Counts of what the generated bodies went through, so a test shows it tried each case.
    struct Tally {
        var drafts = 0
        var whole = 0
        var dropped: Set<String> = []
        var caps: Set<Int> = []

        mutating func add(_ body: APNsBody) {
            if body.droppedFields.isEmpty, body.textByteCap == nil { whole += 1 }
            dropped.formUnion(body.droppedFields)
            if let cap = body.textByteCap { caps.insert(cap) }
        }
    }

    /// Every text of a push the same `text`: a push that needs every drop and the second cap, which random pushes seldom
    /// reach.
    static func everyText(_ text: String, event: LiveActivityEvent) -> LiveActivityPush {
        let alert = AlertText(title: text, body: text)
        let kind: LiveActivityPush.Kind
        switch event {
        case .start:
            kind = .start(
                attributes: .init(orderID: "o", storeID: "s", storeName: text, orderNumber: 42, customerName: text, itemsSummary: text),
                alert: alert)
        case .update: kind = .update(alert: alert)
        case .end: kind = .end(alert: alert)
        }
        let state = OrderActivityAttributes.ContentState(
            status: .preparing, step: 2, stepCount: 3, eta: F.now, pickupPoint: text, baristaName: text, symbolName: text,
            progress: 0.5, compactLeading: .init(text: text), compactTrailing: .init(text: text, countdownEnd: F.now),
            minimal: .init(text: text), small: .init(title: text, status: text),
            lockScreen: .init(title: text, subtitle: text, detail: text, etaRelative: text, etaAbsolute: text))
        return LiveActivityPush(
            kind: kind, contentState: state, timestamp: F.now, staleDate: F.now, dismissalDate: F.now, relevanceScore: 50,
            identity: .init(orderID: "o", storeID: "s", number: 42))
    }

    @Test("any Live Activity push is fitted and written as the encoder writes it, every draft on the way too")
    func anyLiveActivityPushIsFittedAndWrittenAsTheEncoderWritesIt() async {
        var tally = Tally()
        var events: Set<LiveActivityEvent> = []
        await propertyCheck(count: 300, input: Self.push) { push in
            let expected = Self.encoded(push, drafts: &tally.drafts)
            let body = APNsBodyBuilder.liveActivity(push)
            #expect(body == expected, "\(body.string)\nexpected:\n\(expected.string)")
            #expect(body.json.count <= APNsBody.maxBytes)
            tally.add(body)
            events.insert(push.kind.event)
        }
        for event in LiveActivityEvent.allCases {
            for text in ["\u{0}é/", "👨‍👩‍👧‍👦\"", ProjectionPropertyTests.heavy[0]].flatMap({ piece in [1, 4, 16, 64].map { String(repeating: piece, count: $0) } }) {
                let push = Self.everyText(text, event: event)
                let expected = Self.encoded(push, drafts: &tally.drafts)
                let body = APNsBodyBuilder.liveActivity(push)
                #expect(body == expected, "\(body.string)\nexpected:\n\(expected.string)")
                tally.add(body)
            }
        }
        #expect(events == Set(LiveActivityEvent.allCases))
        #expect(tally.whole > 0)
        #expect(tally.dropped == Set(APNsBodyBuilder.liveActivityDropOrder))
        // 18 texts at 256 bytes fit with short identifiers: 512 and 256 are the caps Crema's own bodies reach.
        #expect(tally.caps.isSuperset(of: [512, 256]), "caps reached: \(tally.caps.sorted())")
        #expect(tally.drafts > 600)
    }

    @Test("the projector's pushes of any order, for every event and language, are written as the encoder writes them")
    func theProjectorsPushesAreWrittenAsTheEncoderWritesThem() async {
        var tally = Tally()
        await propertyCheck(count: 40, input: ProjectionPropertyTests.order, ProjectionPropertyTests.text) { order, store in
            for locale in [order.locale, "en", "es", "ja"] {
                for event in LiveActivityEvent.allCases {
                    for alertFor in [nil, OrderEventType.ready, .delayed] {
                        let push = APNsBodyBuilder.push(
                            order: order, projection: nil, storeName: store, timeZone: F.losAngeles, now: F.now, locale: locale,
                            event: event, alertFor: alertFor, timestamp: nil)
                        let expected = Self.encoded(push, drafts: &tally.drafts)
                        let body = APNsBodyBuilder.liveActivity(push)
                        #expect(body == expected, "\(body.string)\nexpected:\n\(expected.string)")
                        tally.add(body)
                    }
                }
            }
        }
        #expect(tally.whole > 0)
        #expect(!tally.dropped.isEmpty)
    }

    static let interruptionLevel = Gen<InterruptionLevel>.case

    @Test("any alert notification is fitted and written as the encoder writes it, every draft on the way too")
    func anyAlertNotificationIsFittedAndWrittenAsTheEncoderWritesIt() async {
        var tally = Tally()
        await propertyCheck(count: 300, input: Self.alertText, Self.text, Self.interruptionLevel, Self.sound) { alert, thread, level, sound in
            // Crema's alerts carry the order and the receipt beside `aps`, and `mutable-content` for the extension.
            let crema = OrderActivityIdentity(
                orderID: "3f1c2a9e-8b7d-4c6e-9a5f-0d1e2f3a4b5c", storeID: "market-st", number: 42, receipt: DeliveryReceipt.placeholder)
            let expected = APNsBodyBuilder.alert(alert, threadID: thread, interruptionLevel: level, sound: sound, crema: crema) { body in
                let expected = APNsPayload.encode(body)
                let written = APNsPayload.write { body.encode(to: &$0) }
                #expect(written == expected, "\(String(decoding: written, as: UTF8.self))\nexpected:\n\(String(decoding: expected, as: UTF8.self))")
                tally.drafts += 1
                return expected
            }
            let body = APNsBodyBuilder.alert(alert, threadID: thread, interruptionLevel: level, sound: sound, crema: crema)
            #expect(body == expected, "\(body.string)\nexpected:\n\(expected.string)")
            tally.add(body)
        }
        #expect(tally.whole > 0)
        #expect(tally.dropped == ["aps.sound"])
        // Two texts and a thread id cut to 512 bytes always fit: the first cap is the only one an alert reaches.
        #expect(tally.caps == [APNsBodyFitter.textByteCaps[0]])
    }

    @Test("a notification with each optional absent or present is written as the encoder writes it")
    func aNotificationWithEachOptionalAbsentOrPresentIsWrittenAsTheEncoderWritesIt() async {
        let notification = zip(Self.text, Self.text.optional, Self.sound, Self.interruptionLevel.optional, Self.text.optional)
            .map { title, body, sound, level, thread in
                APNsPayload.Notification(
                    aps: .init(alert: .init(title: title, body: body, sound: sound), sound: sound, interruptionLevel: level, threadID: thread))
            }
        var absent: Set<String> = []
        var present: Set<String> = []
        await propertyCheck(count: 300, input: notification) { notification in
            let written = APNsPayload.write { notification.encode(to: &$0) }
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: APNsPayload.encode(notification), as: UTF8.self))
            let aps = notification.aps
            for (name, value) in [("body", aps.alert.body), ("sound", aps.sound), ("level", aps.interruptionLevel?.rawValue), ("thread", aps.threadID)] {
                if value == nil { absent.insert(name) } else { present.insert(name) }
            }
        }
        #expect(absent == ["body", "sound", "level", "thread"])
        #expect(present == absent)
    }
}
