public import CremaActivityModels
public import Foundation

/// Projects a store's open orders and announcements into its pickup board, the state one broadcast carries to every
/// subscriber. Pure: the same inputs and `now` give the same board, which the dashboard (`GET /v1/stores/{store}/
/// broadcast`) and the customer (`GET /v1/me/stores/{store}/broadcast`) read as the devices show it.
public enum StoreBoardProjector {
    public static func project(
        storeID: String, storeName: String, orders: [BoardOrder], announcements: [StoreAnnouncement], now: Date
    ) -> (attributes: StoreBoardAttributes, contentState: StoreBoardAttributes.ContentState) {
        let oldestFirst = orders.sorted { ($0.placedAt, $0.number) < ($1.placedAt, $1.number) }
        let ready = oldestFirst.filter { $0.state == .ready }.map(\.number)
        let waiting = oldestFirst.filter { $0.state == .queued || $0.state == .preparing }
        let making = waiting.map(\.number)
        let wait = waiting.map { max(0, Int(($0.eta.timeIntervalSince(now) / 60).rounded(.up))) }.max()
        let language = Self.language(of: orders)
        let words = BoardWording(language)
        let announcement = announcements.filter { $0.until > now }.max { $0.createdAt < $1.createdAt }
            .map { DisplayWidth.truncate(Self.oneLine($0.message), toColumns: 80) }
        let waitText = words.minutes(wait ?? 0)

        let readyLine = ready.isEmpty ? words.nothingReady : "\(words.ready): " + Self.list(ready, separator: ", ")
        var makingLine = making.isEmpty ? words.nothingMaking : "\(words.making): " + Self.list(making, separator: ", ")
        if let wait, !making.isEmpty { makingLine += " · " + words.about(words.minutes(wait)) }
        let smallStatus =
            !ready.isEmpty ? "\(words.ready) " + Self.list(ready, separator: " ")
            : !making.isEmpty ? "\(words.making) " + Self.list(making, separator: " ") : words.nothingMaking

        let state = StoreBoardAttributes.ContentState(
            preparing: Array(making.prefix(StoreBoardAttributes.listLimit)),
            ready: Array(ready.prefix(StoreBoardAttributes.listLimit)),
            waitMinutes: wait, announcement: announcement, language: language.rawValue, updatedAt: now,
            compactLeading: .init(text: ready.last.map { DisplayWidth.truncate("#\($0)", toColumns: 4) }),
            compactTrailing: .init(text: DisplayWidth.truncate(waitText, toColumns: 6)),
            minimal: .init(text: DisplayWidth.truncate(String(ready.count), toColumns: 3)),
            small: .init(
                title: DisplayWidth.truncate(storeName, toColumns: 18), status: DisplayWidth.truncate(smallStatus, toColumns: 22)),
            lockScreen: .init(
                title: DisplayWidth.truncate(readyLine, toColumns: 40), subtitle: DisplayWidth.truncate(makingLine, toColumns: 60),
                announcement: announcement))
        return (StoreBoardAttributes(storeID: storeID, storeName: storeName), state)
    }

    /// The language most of the waiting customers read (ties go to the first in `ActivityLanguage.allCases`, English);
    /// English for an empty board.
    static func language(of orders: [BoardOrder]) -> ActivityLanguage {
        var counts: [ActivityLanguage: Int] = [:]
        for order in orders { counts[ActivityLanguage(localeTag: order.locale), default: 0] += 1 }
        var chosen = ActivityLanguage.english
        for language in ActivityLanguage.allCases where (counts[language] ?? 0) > (counts[chosen] ?? 0) { chosen = language }
        return chosen
    }

    /// At most `listLimit` numbers, then "+N" for the rest.
    static func list(_ numbers: [Int], separator: String) -> String {
        let shown = numbers.prefix(StoreBoardAttributes.listLimit).map(String.init).joined(separator: separator)
        let rest = numbers.count - StoreBoardAttributes.listLimit
        return rest > 0 ? shown + separator + "+\(rest)" : shown
    }

    /// A store's message on one line: control characters and line breaks become spaces.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control || $0 == "\u{2028}" ? " " : $0 }))
    }
}
