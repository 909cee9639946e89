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

    @Test func aTypicalPlacementIsAccepted() {
        #expect(rejection(Fixtures.placement()) == nil)
    }

    @Test func anOrderWithoutItemsIsRefusedNamingTheField() {
        #expect(rejection(Fixtures.placement(items: [])) == .invalidValue(field: "items", reason: "must hold at least one item"))
    }

    @Test func fiftyItemsAreAcceptedAndFiftyOneAreNot() {
        let item = OrderItem(name: "Drip")
        #expect(rejection(Fixtures.placement(items: Array(repeating: item, count: 50))) == nil)
        #expect(rejection(Fixtures.placement(items: Array(repeating: item, count: 51)))?.code == "invalid_value")
    }

    @Test(arguments: [0, -1, 100]) func quantitiesOutsideOneToNinetyNineAreRefused(_ quantity: Int) {
        let error = rejection(Fixtures.placement(items: [OrderItem(name: "Mocha", quantity: quantity)]))
        guard case .invalidValue(let field, _) = error else {
            Issue.record("expected invalid_value, got \(String(describing: error))")
            return
        }
        #expect(field == "items[0].quantity")
    }

    @Test(arguments: ["", "   ", "Ana\u{0007}"]) func blankOrControlDisplayNamesAreRefused(_ name: String) {
        var placement = Fixtures.placement()
        placement.displayName = name
        guard case .invalidValue(let field, _) = rejection(placement) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(field == "display_name")
    }

    @Test func lengthIsCountedInCharactersSoJapaneseNamesFit() {
        var placement = Fixtures.placement()
        placement.displayName = String(repeating: "抹", count: 80)
        #expect(rejection(placement) == nil)
        placement.displayName = String(repeating: "抹", count: 81)
        #expect(rejection(placement)?.code == "invalid_value")
    }

    @Test(arguments: ["en", "es", "ja", "es-MX", "zh-Hant-TW"]) func languageTagsAreAccepted(_ tag: String) {
        var placement = Fixtures.placement()
        placement.locale = tag
        #expect(rejection(placement) == nil)
    }

    @Test(arguments: ["", " ", "e", "english", "en_US", "en-", "1a", "ja_JP", "EN"])
    func aLocaleThePOSGotWrongNeverRefusesTheOrder(_ tag: String) {
        var placement = Fixtures.placement()
        placement.locale = tag
        #expect(rejection(placement) == nil)
    }

    @Test(arguments: [-3601.0, 86_401.0]) func etasOutsideTheWindowAreRefused(_ offset: TimeInterval) {
        var placement = Fixtures.placement()
        placement.eta = Fixtures.now.addingTimeInterval(offset)
        guard case .invalidValue(let field, _) = rejection(placement) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(field == "eta")
    }

    @Test(arguments: ["market-st", "a", "store-9"]) func storeSlugsAreValid(_ id: String) {
        #expect(StoreID.isValid(id))
    }

    @Test(arguments: ["", "-x", "Market", "market st", "é", String(repeating: "a", count: 64)])
    func otherStoreIDsAreInvalid(_ id: String) {
        #expect(!StoreID.isValid(id))
    }

    @Test func aCancelWithABlankReasonIsRefused() {
        let order = Fixtures.order(in: .queued)
        #expect(throws: OrderError.invalidValue(field: "reason", reason: "must not be blank")) {
            try OrderStateMachine.apply(.canceled(reason: " "), to: order, expectedVersion: nil, at: Fixtures.later)
        }
    }

    @Test func aDelayIntoThePastIsRefused() {
        let order = Fixtures.order(in: .preparing)
        #expect(throws: OrderError.self) {
            try OrderStateMachine.apply(
                .delayed(eta: Fixtures.now.addingTimeInterval(-7200), reason: nil), to: order, expectedVersion: nil,
                at: Fixtures.later)
        }
    }
}
