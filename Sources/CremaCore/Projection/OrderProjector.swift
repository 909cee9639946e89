public import CremaActivityModels
public import Foundation

/// Turns an order into what each Live Activity surface shows: pure, so the same order, store, clock and
/// locale always give the same bytes (golden files hold it to that), and it is cheap enough to run per event.
public enum OrderProjector {
    /// Steps a customer can see: received, being made, ready.
    public static let stepCount = 3

    /// The activity's dynamic state at `now`, worded in `locale`'s language (English when unknown), with every
    /// text within its `FamilyBudget`. `timeZone` is the store's: clock times are read where the counter is.
    public static func contentState(
        order: Order,
        storeName: String,
        timeZone: TimeZone,
        now: Date,
        locale: String
    ) -> OrderActivityAttributes.ContentState {
        let book = ActivityLanguage(localeTag: locale).phrasebook
        let c = context(order: order, storeName: storeName, timeZone: timeZone, now: now)
        let status = OrderActivityStatus(order.state)
        let waiting = status == .queued || status == .preparing
        let summary = Phrase.fit(book.itemsSummary(c), budget: FamilyBudget.itemsSummary)
        func cut(_ text: String, _ budget: Int) -> String { DisplayWidth.truncate(text, toColumns: budget) }

        let number = [Phrase("#\(order.number)"), Phrase("\(order.number)"), Phrase("…\(order.number % 1000)")]
        let trailing = waiting ? book.compactETA(c.eta) : book.compactWord(status)
        return .init(
            status: status,
            step: step(status),
            stepCount: stepCount,
            eta: order.eta,
            pickupPoint: c.pickup.map { cut($0, FamilyBudget.pickupPoint) },
            baristaName: c.barista.map { cut($0, FamilyBudget.baristaName) },
            symbolName: symbolName(status),
            progress: progress(status),
            compactLeading: .init(text: Phrase.fit(number, budget: FamilyBudget.compactLeading)),
            compactTrailing: .init(
                text: cut(trailing, FamilyBudget.compactTrailing),
                countdownEnd: waiting && !c.eta.isDue ? order.eta : nil),
            minimal: .init(text: waiting ? book.minimalETA(c.eta).map { cut($0, FamilyBudget.minimal) } : nil),
            small: .init(
                title: Phrase.fit(book.smallTitle(c), budget: FamilyBudget.smallTitle),
                status: Phrase.fit(book.smallStatus(status, c), budget: FamilyBudget.smallStatus)),
            lockScreen: .init(
                title: Phrase.fit(book.lockTitle(status, c), budget: FamilyBudget.lockTitle),
                subtitle: Phrase.fit(book.lockSubtitle(status, c), budget: FamilyBudget.lockSubtitle),
                detail: Phrase.fit(book.detail(c, summary: summary), budget: FamilyBudget.lockDetail),
                etaRelative: waiting ? cut(book.relativeETA(c.eta), FamilyBudget.lockETARelative) : nil,
                etaAbsolute: waiting ? cut(book.clock(c.eta), FamilyBudget.lockETAAbsolute) : nil)
        )
    }

    /// The activity's static data, sent once when a push starts it.
    public static func attributes(order: Order, storeName: String, locale: String) -> OrderActivityAttributes {
        let book = ActivityLanguage(localeTag: locale).phrasebook
        // The summary and names need no clock: any time zone and `now` give the same static texts.
        let c = context(order: order, storeName: storeName, timeZone: .gmt, now: order.eta)
        return OrderActivityAttributes(
            orderID: order.id.uuidString.lowercased(), storeID: order.storeID,
            storeName: DisplayWidth.truncate(c.store, toColumns: FamilyBudget.storeName),
            orderNumber: order.number,
            customerName: DisplayWidth.truncate(c.customer, toColumns: FamilyBudget.customerName),
            itemsSummary: Phrase.fit(book.itemsSummary(c), budget: FamilyBudget.itemsSummary))
    }

    /// The alert a customer reads for `event` (a banner, the Apple Watch, or an activity's alerting update).
    public static func alert(
        for event: OrderEventType,
        order: Order,
        storeName: String,
        timeZone: TimeZone,
        now: Date,
        locale: String
    ) -> AlertText {
        let book = ActivityLanguage(localeTag: locale).phrasebook
        let c = context(order: order, storeName: storeName, timeZone: timeZone, now: now)
        return AlertText(
            title: Phrase.fit(book.alertTitle(event, c), budget: FamilyBudget.alertTitle),
            body: Phrase.fit(book.alertBody(event, c), budget: FamilyBudget.alertBody))
    }

    /// SF Symbols per state (all in SF Symbols 5, iOS 17).
    public static func symbolName(_ status: OrderActivityStatus) -> String {
        switch status {
        case .queued: "clock.fill"
        case .preparing: "cup.and.heat.waves.fill"
        case .ready: "takeoutbag.and.cup.and.straw.fill"
        case .pickedUp: "checkmark.circle.fill"
        case .canceled: "xmark.circle.fill"
        }
    }

    /// Fixed points on the bar: received is under way, making is past half, ready is complete.
    public static func progress(_ status: OrderActivityStatus) -> Double {
        switch status {
        case .queued: 0.25
        case .preparing: 0.6
        case .ready, .pickedUp: 1
        case .canceled: 0
        }
    }

    /// Step n of `stepCount`; a canceled order is on no step.
    public static func step(_ status: OrderActivityStatus) -> Int {
        switch status {
        case .queued: 1
        case .preparing: 2
        case .ready, .pickedUp: 3
        case .canceled: 0
        }
    }

    static func context(order: Order, storeName: String, timeZone: TimeZone, now: Date) -> PhraseContext {
        let first = order.items.first
        let firstQuantity = first?.quantity ?? 1
        let total = order.items.reduce(0) { $0 + max($1.quantity, 0) }
        return PhraseContext(
            number: order.number,
            store: clean(storeName) ?? order.storeID,
            customer: clean(order.displayName) ?? "",
            barista: order.barista.flatMap(clean),
            pickup: order.pickupPoint.flatMap(clean),
            eta: ETAReading(eta: order.eta, now: now, timeZone: timeZone),
            firstItem: first.flatMap { clean($0.name) } ?? "",
            firstSize: first?.size.flatMap(clean),
            firstQuantity: firstQuantity,
            moreCount: max(total - firstQuantity, 0))
    }

    /// Invisible and reordering characters go (`DisplayText`), runs of whitespace (tabs, newlines) become one
    /// space; blank becomes nil. Every text from a client passes here before it reaches a device.
    static func clean(_ text: String) -> String? {
        let visible = DisplayText.visible(text)
        if isClean(visible) { return visible }
        return collapsingWhitespace(visible)
    }

    /// The split and join `clean` falls back to, and the reference its fast path is tested against.
    static func collapsingWhitespace(_ text: String) -> String? {
        let words = text.split(whereSeparator: { $0.isWhitespace })
        return words.isEmpty ? nil : words.joined(separator: " ")
    }

    /// Not blank, every scalar standalone (`DisplayWidth.isStandalone`, so each is a character of its own) and printable,
    /// with single spaces between words and no other whitespace: what most names are, and text the split and join
    /// would give back unchanged.
    static func isClean(_ text: String) -> Bool {
        var previous: UInt32 = 0x20
        for scalar in text.unicodeScalars {
            let value = scalar.value
            guard DisplayWidth.isStandalone(value), value >= 0x20, value != 0x7F, value != 0xA0, value != 0x3000,
                value != 0x20 || previous != 0x20
            else { return false }
            previous = value
        }
        return previous != 0x20
    }
}
