import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

@Suite struct APNsBodyTests {
    typealias F = ActivityFixtures

    func aps(_ body: APNsBody) throws -> [String: Any] {
        try #require(F.jsonObject(body.json)["aps"] as? [String: Any])
    }

    @Test("a start carries the attributes their type an alert and asks for a push token") func aStartCarriesTheAttributesTheirTypeAnAlertAndAsksForAPushToken() throws {
        let body = APNsBodyBuilder.liveActivity(
            order: F.order(.queued), storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en",
            event: .start, alertFor: nil)
        let aps = try aps(body)
        #expect(aps["event"] as? String == "start")
        #expect(aps["attributes-type"] as? String == "OrderActivityAttributes")
        #expect(aps["input-push-token"] as? Int == 1)
        let attributes = try #require(aps["attributes"] as? [String: Any])
        #expect(attributes["orderNumber"] as? Int == 42)
        #expect(attributes["storeName"] as? String == "Market St")
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Order received")
        #expect(alert["sound"] as? String == "default")
        #expect(body.droppedFields.isEmpty && body.textByteCap == nil)
    }

    @Test("aps times are unix seconds and content state dates are seconds since 2001") func apsTimesAreUnixSecondsAndContentStateDatesAreSecondsSince2001() throws {
        let order = F.order(.preparing)
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en",
            event: .update, alertFor: nil)
        let aps = try aps(body)
        #expect(aps["timestamp"] as? Int == Int(F.now.timeIntervalSince1970))
        #expect(aps["stale-date"] as? Int == Int(order.eta.timeIntervalSince1970) + 600)
        let state = try #require(aps["content-state"] as? [String: Any])
        #expect(state["eta"] as? Double == order.eta.timeIntervalSinceReferenceDate)
        #expect(order.eta.timeIntervalSince1970 - order.eta.timeIntervalSinceReferenceDate == 978_307_200)
        #expect(aps["attributes"] == nil && aps["input-push-token"] == nil && aps["alert"] == nil)
    }

    @Test("an end after pickup is dismissed fifteen minutes later") func anEndAfterPickupIsDismissedFifteenMinutesLater() throws {
        let body = APNsBodyBuilder.liveActivity(
            order: F.order(.pickedUp), storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "en",
            event: .end, alertFor: nil)
        let aps = try aps(body)
        #expect(aps["event"] as? String == "end")
        #expect(aps["dismissal-date"] as? Int == Int(F.now.timeIntervalSince1970) + 900)
        #expect(aps["stale-date"] == nil)
    }

    @Test("relevance rises as the order nears ready") func relevanceRisesAsTheOrderNearsReady() {
        let queued = F.contentState(F.order(.queued, eta: 600))
        let early = F.contentState(F.order(.preparing, eta: 900))
        let late = F.contentState(F.order(.preparing, eta: 60))
        let ready = F.contentState(F.order(.ready))
        let scores = [queued, early, late, ready].map { LiveActivityTiming.relevanceScore($0, now: F.now) }
        #expect(scores == scores.sorted() && Set(scores).count == 4)
    }

    @Test("an alert is threaded by order and ready breaks through focus") func anAlertIsThreadedByOrderAndReadyBreaksThroughFocus() throws {
        let order = F.order(.ready, locale: "es")
        let body = APNsBodyBuilder.alert(
            for: .ready, order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: "es")
        let aps = try aps(body)
        #expect(aps["thread-id"] as? String == "3f1c2a9e-8b7d-4c6e-9a5f-0d1e2f3a4b5c")
        #expect(aps["interruption-level"] as? String == "time-sensitive")
        #expect(aps["sound"] as? String == "default")
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Ana, ¡tu pedido está listo!")
        #expect(alert["body"] as? String == "Recoge tu pedido #42 en: la barra.")
    }

    @Test("the widget body is apples reload signal") func theWidgetBodyIsApplesReloadSignal() {
        #expect(APNsBodyBuilder.widget.string == #"{"aps":{"content-changed":true},"crema":{"receipt":""# + DeliveryReceipt.placeholder + #""}}"#)
    }

    /// The issue's "done when": 50 items with 60-character Japanese names.
    @Test("fifty items with long japanese names still fit every body", arguments: OrderState.allCases)
    func fiftyItemsWithLongJapaneseNamesStillFitEveryBody(_ state: OrderState) throws {
        let name = String(repeating: "抹茶ほうじ茶ラテ", count: 8).prefix(60)
        let items = (0..<50).map { OrderItem(name: "\($0)" + name.dropFirst(String($0).count), size: "トールサイズ", quantity: 99, modifiers: Array(repeating: String(name), count: 20)) }
        var order = F.order(state, locale: "ja", items: items)
        order.displayName = String(repeating: "山田花子", count: 20)
        order.barista = String(repeating: "佐藤", count: 30)
        if order.pickupPoint != nil { order.pickupPoint = String(repeating: "受取カウンター", count: 5).prefix(40).description }
        let storeName = String(repeating: "渋谷スクランブルスクエア店", count: 6)
        let state = OrderProjector.contentState(order: order, storeName: storeName, timeZone: F.losAngeles, now: F.now, locale: "ja")
        F.expectWithinBudgets(state)
        for (name, body) in F.allBodies(order, storeName: storeName) {
            #expect(body.json.count <= APNsBody.maxBytes, "\(name): \(body.json.count) bytes")
            #expect(body.droppedFields.isEmpty && body.textByteCap == nil, "\(name) needed fitting")
            let object = try F.jsonObject(body.json)
            if name.hasPrefix("liveactivity") {
                let contentState = try #require((object["aps"] as? [String: Any])?["content-state"] as? [String: Any])
                #expect(contentState["status"] as? String == order.state.rawValue, "\(name)")
            }
        }
    }

    @Test("a body that would not fit drops optional fields in order then cuts texts but keeps the status") func aBodyThatWouldNotFitDropsOptionalFieldsInOrderThenCutsTextsButKeepsTheStatus() throws {
        // Each grapheme is a base letter with 60 combining marks: within every column budget, far over in bytes.
        let heavy = String(repeating: "a" + String(repeating: "\u{0301}", count: 60), count: 60)
        var order = F.order(.ready, locale: "en")
        order.displayName = heavy
        order.barista = heavy
        order.pickupPoint = heavy
        order.items = [OrderItem(name: heavy, size: heavy)]
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: heavy, timeZone: F.losAngeles, now: F.now, locale: "en", event: .start, alertFor: .ready)
        #expect(body.json.count <= APNsBody.maxBytes)
        // In drop order, each only if present: a ready order has no ETA texts or countdown, a start no dismissal.
        #expect(body.droppedFields == [
            "aps.content-state.lockScreen.detail", "aps.content-state.baristaName", "aps.content-state.pickupPoint",
            "aps.alert.sound", "aps.relevance-score", "aps.stale-date",
        ])
        #expect(body.textByteCap != nil)
        let aps = try aps(body)
        let state = try #require(aps["content-state"] as? [String: Any])
        #expect(state["status"] as? String == "ready")
        #expect(aps["alert"] != nil, "a start keeps its alert")
        #expect(aps["attributes"] != nil)
        // What survived still decodes as the app's type.
        let decoded = try JSONDecoder().decode(OrderActivityAttributes.ContentState.self, from: JSONSerialization.data(withJSONObject: state))
        #expect(decoded.status == .ready)
    }

    @Test("an update may lose its alert before its timing fields") func anUpdateMayLoseItsAlertBeforeItsTimingFields() {
        let heavy = String(repeating: "a" + String(repeating: "\u{0301}", count: 60), count: 60)
        var order = F.order(.preparing, locale: "en")
        order.displayName = heavy
        order.barista = heavy
        order.items = [OrderItem(name: heavy)]
        let body = APNsBodyBuilder.liveActivity(
            order: order, storeName: heavy, timeZone: F.losAngeles, now: F.now, locale: "en", event: .update, alertFor: .delayed)
        #expect(body.json.count <= APNsBody.maxBytes)
        #expect(body.droppedFields.contains("aps.alert"))
    }

    @Test("cutting texts by bytes keeps whole characters") func cuttingTextsByBytesKeepsWholeCharacters() {
        let family = "👨‍👩‍👧‍👦"  // 25 bytes
        let body = APNsBodyBuilder.alert(
            AlertText(title: String(repeating: family, count: 200), body: String(repeating: family, count: 200)),
            threadID: "t", interruptionLevel: .active)
        #expect(body.json.count <= APNsBody.maxBytes)
        #expect(body.droppedFields == ["aps.sound"])
        let text = body.string
        #expect(text.contains(family + "…"))
    }

    @Test("values JSON cannot carry are sanitized instead of failing the send") func valuesJSONCannotCarryAreSanitizedInsteadOfFailingTheSend() throws {
        var state = F.contentState(F.order(.preparing))
        state.progress = .nan
        state.eta = Date(timeIntervalSinceReferenceDate: .infinity)
        state.compactTrailing.countdownEnd = Date(timeIntervalSinceReferenceDate: -.infinity)
        let body = APNsBodyBuilder.liveActivity(LiveActivityPush(
            kind: .update(alert: nil), contentState: state, timestamp: F.now,
            staleDate: Date(timeIntervalSinceReferenceDate: .infinity), relevanceScore: .infinity))
        let aps = try aps(body)
        let decoded = try JSONDecoder().decode(
            OrderActivityAttributes.ContentState.self,
            from: JSONSerialization.data(withJSONObject: try #require(aps["content-state"])))
        #expect(decoded.progress == 0 && decoded.compactTrailing.countdownEnd == nil)
        #expect(aps["relevance-score"] == nil && aps["stale-date"] == nil)
    }
}
