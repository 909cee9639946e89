import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

@Suite("the store board projection") struct StoreBoardProjectorTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func order(_ number: Int, _ state: OrderState, locale: String = "en", etaMinutes: Double = 5, placedMinutesAgo: Double = 10) -> BoardOrder {
        BoardOrder(
            number: number, state: state, eta: now.addingTimeInterval(etaMinutes * 60), locale: locale,
            placedAt: now.addingTimeInterval(-placedMinutesAgo * 60))
    }

    static func project(_ orders: [BoardOrder], announcements: [StoreAnnouncement] = [], name: String = "Market St")
        -> StoreBoardAttributes.ContentState
    {
        StoreBoardProjector.project(storeID: "s1", storeName: name, orders: orders, announcements: announcements, now: now).contentState
    }

    @Test("numbers go to their lists oldest first and finished orders are not shown") func numbersGoToTheirListsOldestFirst() {
        let state = Self.project([
            Self.order(42, .preparing, placedMinutesAgo: 2), Self.order(41, .queued, placedMinutesAgo: 3),
            Self.order(40, .ready, placedMinutesAgo: 8), Self.order(38, .ready, placedMinutesAgo: 9), Self.order(37, .pickedUp),
        ])
        #expect(state.preparing == [41, 42])
        #expect(state.ready == [38, 40])
        #expect(state.lockScreen.title == "Ready: 38, 40")
        #expect(state.compactLeading.text == "#40")
        #expect(state.minimal.text == "2")
        #expect(state.small.status == "Ready 38 40")
    }

    @Test("the wait is the longest time left of the orders being made, in whole minutes") func theWaitIsTheLongestTimeLeft() {
        let state = Self.project([Self.order(1, .queued, etaMinutes: 7.2), Self.order(2, .preparing, etaMinutes: 3), Self.order(3, .ready, etaMinutes: 30)])
        #expect(state.waitMinutes == 8)
        #expect(state.compactTrailing.text == "8 min")
        #expect(state.lockScreen.subtitle == "Making: 1, 2 · about 8 min")
    }

    @Test("an empty board says so and has no wait") func anEmptyBoardSaysSo() {
        let state = Self.project([])
        #expect(state.preparing.isEmpty && state.ready.isEmpty)
        #expect(state.waitMinutes == nil)
        #expect(state.compactLeading.text == nil)
        #expect(state.lockScreen.title == "Nothing ready yet")
        #expect(state.language == "en")
    }

    @Test("the board speaks the language most waiting customers read, english on a tie") func theBoardSpeaksTheMajorityLanguage() {
        let japanese = Self.project([Self.order(1, .ready, locale: "ja-JP"), Self.order(2, .ready, locale: "ja"), Self.order(3, .queued, locale: "es")])
        #expect(japanese.language == "ja")
        #expect(japanese.lockScreen.title == "お渡し可: 1, 2")
        #expect(japanese.compactTrailing.text.hasSuffix("分"))
        let tie = Self.project([Self.order(1, .ready, locale: "ja"), Self.order(2, .ready, locale: "es"), Self.order(3, .ready, locale: "en")])
        #expect(tie.language == "en")
    }

    @Test("only the newest running announcement shows, on one line") func onlyTheNewestRunningAnnouncementShows() {
        let state = Self.project(
            [],
            announcements: [
                StoreAnnouncement(message: "old", until: Self.now.addingTimeInterval(600), createdAt: Self.now.addingTimeInterval(-300)),
                StoreAnnouncement(message: "Machine back\nat 10:30", until: Self.now.addingTimeInterval(600), createdAt: Self.now.addingTimeInterval(-60)),
                StoreAnnouncement(message: "expired", until: Self.now, createdAt: Self.now),
            ])
        #expect(state.announcement == "Machine back at 10:30")
        #expect(state.lockScreen.announcement == "Machine back at 10:30")
    }

    @Test("a long queue keeps its oldest numbers and counts the rest") func aLongQueueKeepsItsOldestNumbers() {
        let orders = (1...40).map { Self.order($0, .queued, placedMinutesAgo: Double(100 - $0)) }
        let state = Self.project(orders)
        #expect(state.preparing == Array(1...StoreBoardAttributes.listLimit))
        #expect(DisplayWidth.columns(of: state.lockScreen.subtitle) <= 60)
        #expect(DisplayWidth.columns(of: state.small.status) <= 22)
    }

    @Test("every text stays within its family's columns for long names and messages") func everyTextStaysWithinItsColumns() {
        let state = Self.project(
            (1...60).map { Self.order(10_000 + $0, $0 % 2 == 0 ? .ready : .preparing, locale: "ja", etaMinutes: 999) },
            announcements: [StoreAnnouncement(message: String(repeating: "長", count: 200), until: Self.now.addingTimeInterval(60), createdAt: Self.now)],
            name: String(repeating: "東京駅八重洲口店", count: 10))
        #expect(DisplayWidth.columns(of: state.small.title) <= 18)
        #expect(DisplayWidth.columns(of: state.small.status) <= 22)
        #expect(DisplayWidth.columns(of: state.lockScreen.title) <= 40)
        #expect(DisplayWidth.columns(of: state.lockScreen.subtitle) <= 60)
        #expect(DisplayWidth.columns(of: state.announcement ?? "") <= 80)
        #expect(DisplayWidth.columns(of: state.compactLeading.text ?? "") <= 4)
        #expect(DisplayWidth.columns(of: state.compactTrailing.text) <= 6)
        #expect(DisplayWidth.columns(of: state.minimal.text) <= 3)
    }

    @Test("the fullest board's broadcast body fits APNs' caps without dropping anything") func theFullestBoardFits() throws {
        let state = Self.project(
            (1...60).map { Self.order(100_000 + $0, $0 % 2 == 0 ? .ready : .preparing, locale: "ja", etaMinutes: 999) },
            announcements: [StoreAnnouncement(message: String(repeating: "😀", count: 200), until: Self.now.addingTimeInterval(60), createdAt: Self.now)],
            name: String(repeating: "東京駅八重洲口店", count: 10))
        let body = BoardBroadcastBody.make(state, staleDate: Self.now.addingTimeInterval(1800))
        #expect(body.json.count <= APNsBody.maxBytes)
        #expect(body.droppedFields.isEmpty)
        let json = try #require(try JSONSerialization.jsonObject(with: body.json) as? [String: Any])
        let aps = try #require(json["aps"] as? [String: Any])
        #expect(aps["event"] as? String == "update")
        #expect(aps["attributes-type"] == nil)
        #expect((aps["content-state"] as? [String: Any])?["ready"] as? [Int] == state.ready)
    }

    @Test("only an order becoming ready is broadcast at priority 10") func onlyReadyIsPriorityTen() {
        for event in OrderEventType.allCases {
            #expect(BoardChange(event: event).priority == (event == .ready ? 10 : 5), "\(event)")
        }
        #expect(BoardChange.announcement.priority == 5)
    }
}
