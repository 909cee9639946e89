import CremaActivityModels
import CremaCore
import Foundation
import Testing

/// Issue #16: locales a real POS sends choose the nearest supported language, and the order keeps the tag
/// only when it is one (tidied); otherwise it keeps English, the language its texts fall back to.
@Suite struct OrderLocaleTests {
    @Test("a locale is kept when it is a language tag, in BCP 47's usual case, and English otherwise",
          arguments: [
            ("es-MX", "es-MX"), ("ja_JP", "ja-JP"), ("EN", "en"), ("en-gb", "en-GB"), ("zh_hant_tw", "zh-Hant-TW"),
            ("fr", "fr"), ("es-419", "es-419"), (" es ", "es"),
            ("", "en"), ("   ", "en"), ("english", "en"), ("1a", "en"), ("en-", "en"), ("e", "en"), ("es--MX", "en"),
            ("español", "en"), (String(repeating: "a-", count: 20) + "a", "en"),
            ("\u{3000}ja\u{3000}", "ja"), ("es\t", "es"), ("\nen-US", "en-US"), ("en-US\u{A0}", "en-US"), ("é", "en"),
            ("ES-mx", "es-MX"), ("-en", "en"),
          ])
    func aLocaleIsKeptWhenItIsALanguageTag(_ sample: (String, String)) {
        #expect(OrderLocale.normalized(sample.0) == sample.1)
    }

    @Test("an order placed with an empty, unknown or region-tagged locale reads in the nearest supported language",
          arguments: [
            ("", "en", ActivityLanguage.english), ("xx", "xx", .english), ("es-MX", "es-MX", .spanish),
            ("ja_JP", "ja-JP", .japanese), ("EN", "en", .english), ("ES_es", "es-ES", .spanish), ("fr-CA", "fr-CA", .english),
          ])
    func anOrderReadsInTheNearestSupportedLanguage(_ sample: (String, String, ActivityLanguage)) throws {
        var placement = Fixtures.placement()
        placement.locale = sample.0
        let order = try OrderStateMachine.place(placement, id: UUID(), number: 1, at: Fixtures.now)
        #expect(order.locale == sample.1)
        #expect(ActivityLanguage(localeTag: order.locale) == sample.2)
        let english = OrderProjector.contentState(
            order: order, storeName: "Market St", timeZone: .gmt, now: Fixtures.now, locale: "en")
        let projected = OrderProjector.contentState(
            order: order, storeName: "Market St", timeZone: .gmt, now: Fixtures.now, locale: order.locale)
        #expect((projected.lockScreen.title == english.lockScreen.title) == (sample.2 == .english))
    }
}
