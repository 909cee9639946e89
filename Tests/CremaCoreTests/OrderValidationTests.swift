import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

@Suite struct OrderValidationTests {
    func rejection(_ placement: OrderPlacement) -> OrderError? {
        do {
            _ = try OrderStateMachine.place(placement, id: UUID(), number: 1, at: Fixtures.now)
            return nil
        } catch {
            return error
        }
    }

    @Test("a customer ref with a slash is refused where it enters: no path could ever erase that customer")
    func aSlashInACustomerRefIsRefused() {
        var placement = Fixtures.placement()
        placement.customerRef = "loyalty/42"
        #expect(throws: OrderError.invalidValue(
            field: "customer_ref", reason: "must not contain '/' (the ref names the customer in paths such as DELETE /v1/customers/{ref})"
        )) { try OrderValidation.validate(placement, now: Fixtures.now) }
        placement.customerRef = "loyalty-42"
        #expect(throws: Never.self) { try OrderValidation.validate(placement, now: Fixtures.now) }
    }

    @Test("a typical placement is accepted") func aTypicalPlacementIsAccepted() {
        #expect(rejection(Fixtures.placement()) == nil)
    }

    @Test("an order without items is refused naming the field") func anOrderWithoutItemsIsRefusedNamingTheField() {
        #expect(rejection(Fixtures.placement(items: [])) == .invalidValue(field: "items", reason: "must hold at least one item"))
    }

    @Test("fifty items are accepted and fifty one are not") func fiftyItemsAreAcceptedAndFiftyOneAreNot() {
        let item = OrderItem(name: "Drip")
        #expect(rejection(Fixtures.placement(items: Array(repeating: item, count: 50))) == nil)
        #expect(rejection(Fixtures.placement(items: Array(repeating: item, count: 51)))?.code == "invalid_value")
    }

    @Test("quantities outside one to ninety nine are refused", arguments: [0, -1, 100]) func quantitiesOutsideOneToNinetyNineAreRefused(_ quantity: Int) {
        let error = rejection(Fixtures.placement(items: [OrderItem(name: "Mocha", quantity: quantity)]))
        guard case .invalidValue(let field, _) = error else {
            Issue.record("expected invalid_value, got \(String(describing: error))")
            return
        }
        #expect(field == "items[0].quantity")
    }

    @Test("blank or control display names are refused", arguments: ["", "   ", "Ana\u{0007}"]) func blankOrControlDisplayNamesAreRefused(_ name: String) {
        var placement = Fixtures.placement()
        placement.displayName = name
        guard case .invalidValue(let field, _) = rejection(placement) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(field == "display_name")
    }

    /// Blank means Unicode white space only, whatever the script; control means general category Cc (C0, DEL, C1).
    @Test("white space in any script is blank and every control character is refused", arguments: [
        ("\u{3000}\u{00A0}\u{2003}", "must not be blank"), ("\t\n\u{2028}", "must not be blank"),
        ("Ana\u{7F}", "must not contain control characters"), ("Ana\u{85}", "must not contain control characters"),
        ("\u{9F}Ana", "must not contain control characters"), ("\u{1F}", "must not contain control characters"),
    ])
    func whiteSpaceInAnyScriptIsBlankAndEveryControlCharacterIsRefused(_ name: String, _ reason: String) {
        var placement = Fixtures.placement()
        placement.displayName = name
        #expect(rejection(placement) == .invalidValue(field: "display_name", reason: reason))
    }

    @Test("a name with any visible character next to white space is accepted", arguments: ["\u{A0}Ana", "Ana\u{A0}", "\u{3000}李", "~", "\u{20}!"])
    func aNameWithAnyVisibleCharacterNextToWhiteSpaceIsAccepted(_ name: String) {
        var placement = Fixtures.placement()
        placement.displayName = name
        #expect(rejection(placement) == nil)
    }

    /// The control check reads code points directly; it must agree with Unicode's own category (every Cc code point
    /// is below U+00A0; the scan goes on through the Latin, Greek, Cyrillic and general punctuation blocks).
    @Test("the control check is exactly general category cc") func theControlCheckIsExactlyGeneralCategoryCc() throws {
        let disagreeing = (0...0x2FFF).compactMap(Unicode.Scalar.init).filter { scalar in
            var placement = Fixtures.placement()
            placement.displayName = "A\(Character(scalar))"
            let refused = rejection(placement) == .invalidValue(field: "display_name", reason: "must not contain control characters")
            return refused != (scalar.properties.generalCategory == .control)
        }
        #expect(disagreeing.count == 0, "first: \(disagreeing.prefix(3).map { String($0.value, radix: 16) })")
    }

    @Test("length is counted in characters so japanese names fit") func lengthIsCountedInCharactersSoJapaneseNamesFit() {
        var placement = Fixtures.placement()
        placement.displayName = String(repeating: "抹", count: 80)
        #expect(rejection(placement) == nil)
        placement.displayName = String(repeating: "抹", count: 81)
        #expect(rejection(placement)?.code == "invalid_value")
    }

    @Test("language tags are accepted", arguments: ["en", "es", "ja", "es-MX", "zh-Hant-TW"]) func languageTagsAreAccepted(_ tag: String) {
        var placement = Fixtures.placement()
        placement.locale = tag
        #expect(rejection(placement) == nil)
    }

    @Test("a locale the POS got wrong never refuses the order", arguments: ["", " ", "e", "english", "en_US", "en-", "1a", "ja_JP", "EN"])
    func aLocaleThePOSGotWrongNeverRefusesTheOrder(_ tag: String) {
        var placement = Fixtures.placement()
        placement.locale = tag
        #expect(rejection(placement) == nil)
    }

    @Test("etas outside the window are refused", arguments: [-3601.0, 86_401.0]) func etasOutsideTheWindowAreRefused(_ offset: TimeInterval) {
        var placement = Fixtures.placement()
        placement.eta = Fixtures.now.addingTimeInterval(offset)
        guard case .invalidValue(let field, _) = rejection(placement) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(field == "eta")
    }

    @Test("store slugs are valid", arguments: ["market-st", "a", "store-9"]) func storeSlugsAreValid(_ id: String) {
        #expect(StoreID.isValid(id))
    }

    @Test("other store IDs are invalid", arguments: ["", "-x", "Market", "market st", "é", String(repeating: "a", count: 64)])
    func otherStoreIDsAreInvalid(_ id: String) {
        #expect(!StoreID.isValid(id))
    }

    @Test("a cancel with a blank reason is refused") func aCancelWithABlankReasonIsRefused() {
        let order = Fixtures.order(in: .queued)
        #expect(throws: OrderError.invalidValue(field: "reason", reason: "must not be blank")) {
            try OrderStateMachine.apply(.canceled(reason: " "), to: order, expectedVersion: nil, at: Fixtures.later)
        }
    }

    @Test("a delay into the past is refused") func aDelayIntoThePastIsRefused() {
        let order = Fixtures.order(in: .preparing)
        #expect(throws: OrderError.self) {
            try OrderStateMachine.apply(
                .delayed(eta: Fixtures.now.addingTimeInterval(-7200), reason: nil), to: order, expectedVersion: nil,
                at: Fixtures.later)
        }
    }
}
