import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

@Suite struct OrderProjectorTests {
    typealias F = ActivityFixtures

    @Test("locale tags fall back to their language and unknown ones to english", arguments: [("en", ActivityLanguage.english), ("es-MX", .spanish), ("ja-JP", .japanese), ("es_ES", .spanish),
                      ("EN-gb", .english), ("fr", .english), ("zh-Hant-TW", .english), ("", .english)])
    func localeTagsFallBackToTheirLanguageAndUnknownOnesToEnglish(_ sample: (String, ActivityLanguage)) {
        #expect(ActivityLanguage(localeTag: sample.0) == sample.1)
    }

    @Test("the ETA reads in each languages own short form") func theETAReadsInEachLanguagesOwnShortForm() {
        let en = F.contentState(F.order(.preparing, locale: "en", eta: 180))
        let es = F.contentState(F.order(.preparing, locale: "es", eta: 180))
        let ja = F.contentState(F.order(.preparing, locale: "ja", eta: 180))
        #expect(en.compactTrailing.text == "3 min")
        #expect(es.compactTrailing.text == "3 min")
        #expect(ja.compactTrailing.text == "3分")
        #expect(en.lockScreen.etaRelative == "in 3 min")
        #expect(es.lockScreen.etaRelative == "en 3 min")
        #expect(ja.lockScreen.etaRelative == "あと3分")
        #expect(en.minimal.text == "3m")
        #expect(ja.minimal.text == "3分")
    }

    @Test("a part minute counts as a whole one") func aPartMinuteCountsAsAWholeOne() {
        #expect(F.contentState(F.order(.queued, eta: 61)).compactTrailing.text == "2 min")
        #expect(F.contentState(F.order(.queued, eta: 1)).compactTrailing.text == "1 min")
    }

    @Test("a passed ETA reads as any moment and stops the countdown") func aPassedETAReadsAsAnyMomentAndStopsTheCountdown() {
        let en = F.contentState(F.order(.preparing, locale: "en", eta: -120))
        #expect(en.compactTrailing.text == "Soon")
        #expect(en.compactTrailing.countdownEnd == nil)
        #expect(en.lockScreen.etaRelative == "any moment now")
        #expect(en.lockScreen.subtitle.hasPrefix("Ready any moment now"))
        #expect(en.minimal.text == nil)
        #expect(F.contentState(F.order(.preparing, locale: "es", eta: -120)).lockScreen.etaRelative == "en cualquier momento")
        #expect(F.contentState(F.order(.preparing, locale: "ja", eta: -120)).lockScreen.etaRelative == "まもなく")
    }

    @Test("a waiting order counts down to its ETA") func aWaitingOrderCountsDownToItsETA() {
        let order = F.order(.queued, eta: 600)
        #expect(F.contentState(order).compactTrailing.countdownEnd == order.eta)
    }

    @Test("long waits read in hours") func longWaitsReadInHours() {
        let en = F.contentState(F.order(.queued, locale: "en", eta: 150 * 60))
        #expect(en.compactTrailing.text == "3 hr")
        #expect(en.lockScreen.etaRelative == "in 2 hr 30 min")
        #expect(F.contentState(F.order(.queued, locale: "ja", eta: 150 * 60)).lockScreen.etaRelative == "あと2時間30分")
    }

    @Test("the absolute ETAIs the stores clock in each languages style") func theAbsoluteETAIsTheStoresClockInEachLanguagesStyle() {
        // now + 300 s is 03:11:40 in Los Angeles, rounded up to the minute.
        #expect(F.contentState(F.order(.queued, locale: "en")).lockScreen.etaAbsolute == "3:12 AM")
        #expect(F.contentState(F.order(.queued, locale: "es")).lockScreen.etaAbsolute == "3:12")
        #expect(F.contentState(F.order(.queued, locale: "ja")).lockScreen.etaAbsolute == "3:12")
        #expect(F.contentState(F.order(.queued, locale: "es")).lockScreen.subtitle == "Listo hacia las 3:12 · Market St")
        #expect(F.contentState(F.order(.queued, locale: "ja")).lockScreen.subtitle == "3:12ごろ完成予定 · Market St")
        let afternoon = F.contentState(F.order(.queued, locale: "en", eta: 11 * 3600))
        #expect(afternoon.lockScreen.etaAbsolute == "2:07 PM")
    }

    @Test("spanish says la una but las otherwise") func spanishSaysLaUnaButLasOtherwise() {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        let oneAM = Date(timeIntervalSince1970: 1_795_017_900)  // 01:05 in Tokyo
        var order = F.order(.queued, locale: "es")
        order.eta = oneAM
        let state = F.contentState(order, now: oneAM.addingTimeInterval(-600), timeZone: tokyo)
        #expect(state.lockScreen.subtitle.hasPrefix("Listo hacia la 1:05"))
    }

    @Test("each state has its symbol step and progress", arguments: OrderState.allCases) func eachStateHasItsSymbolStepAndProgress(_ state: OrderState) {
        let s = F.contentState(F.order(state))
        #expect(s.status.rawValue == state.rawValue)
        #expect(s.stepCount == 3)
        #expect((0...1).contains(s.progress))
        let expected: (String, Int, Double) =
            switch state {
            case .queued: ("clock.fill", 1, 0.25)
            case .preparing: ("cup.and.heat.waves.fill", 2, 0.6)
            case .ready: ("takeoutbag.and.cup.and.straw.fill", 3, 1)
            case .pickedUp: ("checkmark.circle.fill", 3, 1)
            case .canceled: ("xmark.circle.fill", 0, 0)
            }
        #expect(s.symbolName == expected.0)
        #expect(s.step == expected.1)
        #expect(s.progress == expected.2)
    }

    @Test("every state in every language fits its budgets", arguments: OrderState.allCases, ["en", "es", "ja"])
    func everyStateInEveryLanguageFitsItsBudgets(_ state: OrderState, _ locale: String) {
        F.expectWithinBudgets(F.contentState(F.order(state, locale: locale)))
        F.expectWithinBudgets(F.contentState(F.order(state, locale: locale, eta: -600)))
    }

    @Test("the ready title greets the customer by name") func theReadyTitleGreetsTheCustomerByName() {
        #expect(F.contentState(F.order(.ready, locale: "en")).lockScreen.title == "Ana, your order is ready!")
        #expect(F.contentState(F.order(.ready, locale: "es")).lockScreen.title == "Ana, ¡tu pedido está listo!")
        #expect(F.contentState(F.order(.ready, locale: "ja")).lockScreen.title == "さくら様、ご注文の品ができあがりました")
    }

    @Test("a long name is cut and the words around it stay whole") func aLongNameIsCutAndTheWordsAroundItStayWhole() {
        var order = F.order(.preparing, locale: "en")
        order.barista = "Bartholomew Featherstonehaugh-Fotheringay"
        let title = F.contentState(order).lockScreen.title
        #expect(title.hasSuffix("… is making your order"))
        #expect(DisplayWidth.columns(of: title) <= FamilyBudget.lockTitle)
    }

    @Test("a long japanese name is cut on whole characters before the honorific") func aLongJapaneseNameIsCutOnWholeCharactersBeforeTheHonorific() {
        var order = F.order(.ready, locale: "ja")
        order.displayName = String(repeating: "長", count: 40)
        #expect(F.contentState(order).lockScreen.title == "長長長…様、ご注文の品ができあがりました")
    }

    @Test("wording that leaves too little room for a name falls back to shorter wording") func wordingThatLeavesTooLittleRoomForANameFallsBackToShorterWording() {
        var order = F.order(.ready, locale: "es")
        order.pickupPoint = "Mostrador de recogida junto a la ventana"
        #expect(F.contentState(order).lockScreen.subtitle == "Recógelo en: Mostrador de recogida junto a la ventana")
    }

    @Test("the items summary names the first item and counts the rest") func theItemsSummaryNamesTheFirstItemAndCountsTheRest() {
        let en = OrderProjector.attributes(order: F.order(.queued, locale: "en"), storeName: "Market St", locale: "en")
        #expect(en.itemsSummary == "Oat latte (grande) + 2 more")
        let es = OrderProjector.attributes(order: F.order(.queued, locale: "es"), storeName: "Market St", locale: "es")
        #expect(es.itemsSummary == "Oat latte (grande) y 2 más")
        let ja = OrderProjector.attributes(order: F.order(.queued, locale: "ja"), storeName: "Market St", locale: "ja")
        #expect(ja.itemsSummary == "Oat latte（grande）ほか2点")
    }

    @Test("whitespace in names is tidied") func whitespaceInNamesIsTidied() {
        var order = F.order(.preparing)
        order.barista = "  Sam \t Lee "
        #expect(F.contentState(order).baristaName == "Sam Lee")
    }

    @Test("large order numbers still fit the compact leading view") func largeOrderNumbersStillFitTheCompactLeadingView() {
        var order = F.order(.queued)
        order.number = 999
        #expect(F.contentState(order).compactLeading.text == "#999")
        order.number = 1234
        #expect(F.contentState(order).compactLeading.text == "1234")
        order.number = 12345
        #expect(F.contentState(order).compactLeading.text == "…345")
    }

    @Test("every event has an alert within its budgets", arguments: OrderEventType.allCases, ["en", "es", "ja"])
    func everyEventHasAnAlertWithinItsBudgets(_ event: OrderEventType, _ locale: String) {
        let alert = OrderProjector.alert(
            for: event, order: F.order(.ready, locale: locale), storeName: F.storeName, timeZone: F.losAngeles,
            now: F.now, locale: locale)
        #expect(!alert.title.isEmpty && !alert.body.isEmpty)
        #expect(DisplayWidth.columns(of: alert.title) <= FamilyBudget.alertTitle)
        #expect(DisplayWidth.columns(of: alert.body) <= FamilyBudget.alertBody)
    }
}
