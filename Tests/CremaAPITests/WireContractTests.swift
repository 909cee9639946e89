import CremaAPI
import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import CremaTestSupport
import Foundation
import Testing

/// The HTTP contract is written once in Swift (`CremaAPI`, used by the server and `barista`) and once in
/// `/openapi.yaml` for everyone else. These tests hold the two together: every key a type writes is in its
/// schema, and every key the schema lists is one the type writes, so renaming a field on either side alone
/// fails the build. (Values are checked against the schemas at run time by schemathesis in scripts/test.)
@Suite struct WireContractTests {
    let document: OpenAPIDocument

    init() throws { document = try OpenAPIDocument.load() }

    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let store = Store(id: "market-st", name: "Market St", timezone: "UTC", createdAt: now, updatedAt: now)

    static func order(_ state: OrderState = .preparing) throws -> Order {
        var order = try OrderStateMachine.place(
            OrderPlacement(
                storeID: "market-st", posRef: "T-1", customerRef: "c-9", displayName: "Ana", locale: "es",
                items: [OrderItem(name: "Oat latte", size: "grande", modifiers: ["extra shot"])], eta: now.addingTimeInterval(300)),
            id: UUID(), number: 42, at: now)
        if state != .queued { order = try OrderStateMachine.apply(.started(barista: "Sam"), to: order, expectedVersion: nil, at: now) }
        return order
    }

    /// The keys `value` writes at the top level.
    func keys(_ value: some Encodable) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: try WireCoding.encoder.encode(value)) as? [String: Any]
        return Set(try #require(object).keys)
    }

    @Test("an order writes exactly the keys of the order schema") func anOrderWritesExactlyTheKeysOfTheOrderSchema() throws {
        let (properties, required) = try document.keys(of: "Order")
        let written = try keys(OrderResponse(try Self.order()))
        #expect(written == properties)
        #expect(required.isSubset(of: written))
    }

    @Test("an order with history writes exactly the keys of the order detail schema") func anOrderWithHistoryWritesExactlyTheKeysOfTheOrderDetailSchema() throws {
        let order = try Self.order()
        let events = [RecordedEvent(version: 1, type: .placed, role: .pos, occurredAt: Self.now, data: ["pos_ref": "T-1"])]
        let written = try keys(OrderResponse(order, events: events, projection: .some(["status": "preparing"])))
        let (properties, required) = try document.keys(of: "OrderDetail")
        #expect(written == properties)
        #expect(required.isSubset(of: written))
        let event = try keys(OrderResponse(order, events: events).events![0])
        #expect(event == (try document.keys(of: "RecordedEvent").properties))
    }

    @Test("items stores boards and pages write their schemas keys") func itemsStoresBoardsAndPagesWriteTheirSchemasKeys() throws {
        let order = try Self.order()
        #expect(try keys(ItemResponse(order.items[0])) == (try document.keys(of: "OrderItem").properties))
        var located = Self.store
        located.location = StoreLocation(latitude: 37.7936, longitude: -122.3958)
        let (storeKeys, storeRequired) = try document.keys(of: "Store")
        #expect(try keys(StoreResponse(located)) == storeKeys)
        // A store without a place answers without the key, exactly as before locations existed.
        #expect(try keys(StoreResponse(Self.store)) == storeRequired)
        #expect(try keys(located.location!) == (try document.keys(of: "StoreLocation").properties))
        #expect(try keys(BoardResponse(store: Self.store, columns: [.preparing: [order]])) == (try document.keys(of: "Board").properties))
        let columns = try document.property("columns", of: "Board")
        let board = BoardResponse(store: Self.store, columns: [:])
        #expect(Set(board.columns.keys) == (try document.keys(columns).properties))
        #expect(try keys(OrderPageResponse(orders: [], nextCursor: nil)) == (try document.keys(of: "OrderPage").properties))
    }

    /// The planner's preview of `order`'s change to ready, for `kinds` of tokens.
    static func preview(_ kinds: [PushTargetKind]) throws -> OrderPreview {
        let previous = try order()
        let ready = try OrderStateMachine.apply(.ready(pickupPoint: "counter"), to: previous, expectedVersion: nil, at: now)
        let targets = kinds.enumerated().map { index, kind in
            PushTarget(ref: PushTargetRef(kind: kind, id: Int64(index + 1)), environment: .production, registeredAt: now, bundleID: "cafe.example")
        }
        let context = DeliveryContext(
            order: ready, previous: previous, event: .ready, storeName: store.name, timeZone: .gmt, now: now, targets: targets, history: [])
        return try OrderPreview(DeliveryPreview(context, policy: DeliveryPolicy(), sampleBundleID: "cafe.example"))
    }

    /// The keys written by each element of the array `key` of `value`.
    func elementKeys(_ value: some Encodable, _ key: String) throws -> [Set<String>] {
        let object = try JSONSerialization.jsonObject(with: try WireCoding.encoder.encode(value)) as? [String: Any]
        return try #require(object?[key] as? [[String: Any]]).map { Set($0.keys) }
    }

    @Test("a preview writes exactly the keys of the order preview schema") func aPreviewWritesExactlyTheKeysOfTheOrderPreviewSchema() throws {
        // An activity's update (with its Live Activity event) and widget, and the alert it carries (a skip); an alert
        // of its own (with its collapse id) where no activity runs.
        let activity = try Self.preview([.liveActivity, .alert, .widget])
        let alertOnly = try Self.preview([.alert])
        #expect(try keys(activity) == (try document.keys(of: "OrderPreview").properties))
        #expect(try keys(activity.families) == (try document.keys(document.property("families", of: "OrderPreview")).properties))
        let body = try #require(activity.bodies["alert"])
        let bodies = try document.property("bodies", of: "OrderPreview")
        let bodySchema = try #require(bodies["additionalProperties"] as? [String: Any])
        #expect(try keys(body) == (try document.keys(bodySchema).properties))
        for (name, items) in [("deliveries", [activity, alertOnly]), ("skips", [activity])] {
            let schema = try document.keys(try #require(try document.property(name, of: "OrderPreview")["items"] as? [String: Any]))
            let written = try items.flatMap { try elementKeys($0, name) }
            #expect(!written.isEmpty, "\(name)")
            #expect(written.reduce(into: Set<String>()) { $0.formUnion($1) } == schema.properties, "\(name)")
            for entry in written { #expect(schema.required.isSubset(of: entry), "\(name): \(entry)") }
        }
    }

    @Test("token answers and delivery logs stay within their schemas") func tokenAnswersAndDeliveryLogsStayWithinTheirSchemas() throws {
        let token = TokenResponse(kind: "live_activity", orderID: UUID(), customerRef: "c-9", environment: .sandbox, redactedToken: "5c0e7d2a…", created: true)
        #expect(try keys(token) == (try document.keys(of: "RegisteredToken").properties))
        let entry = DeliveryResponse(
            id: 1, orderVersion: 2, orderEvent: "ready", targetKind: "live_activity", token: "5c0e7d2a…", pushType: "liveactivity",
            liveActivityEvent: "update", priority: 10, collapseID: "c", state: "sent", reasonCode: "activity_update_urgent",
            reason: "…", attempts: 1, apnsStatus: 200, apnsReason: "x", apnsID: UUID().uuidString.lowercased(), plannedAt: Self.now,
            notBefore: Self.now, expiresAt: Self.now, sentAt: Self.now, finishedAt: Self.now, receivedAt: Self.now, receiptSurface: "activity")
        let (properties, required) = try document.keys(of: "Delivery")
        let written = try keys(entry)
        #expect(written == properties)
        #expect(required.isSubset(of: written))
        #expect(try keys(DeliveriesResponse(orderID: UUID(), deliveries: [])) == (try document.keys(of: "Deliveries").properties))
    }

    @Test("a receipt answer and a funnel stay within their schemas") func aReceiptAnswerAndAFunnelStayWithinTheirSchemas() throws {
        #expect(try keys(ReceiptsResponse(accepted: 1, unknown: 0)) == (try document.keys(of: "ReceiptsAnswer").properties))
        let step = FunnelResponse.Step(
            pushType: "alert", event: nil, planned: 1, sent: 1, accepted: 1,
            received: ["notification": 1, "activity": 0, "app": 0, "activity_token": 0, "widget_fetch": 0],
            receiptSeconds: .init(p50: nil, p99: nil))
        let funnel = FunnelResponse(since: Self.now, pushTypes: [step])
        #expect(try keys(funnel) == (try document.keys(of: "Funnel").properties))
        let items = try document.keys(try #require(try document.property("push_types", of: "Funnel")["items"] as? [String: Any]))
        let written = try elementKeys(funnel, "push_types")
        #expect(written == [items.properties] && items.required == items.properties)
    }

    @Test("requests read exactly the keys their schemas describe") func requestsReadExactlyTheKeysTheirSchemasDescribe() throws {
        let place = PlaceOrderRequest(
            storeID: "market-st", posRef: "T-1", customerRef: "c-9", displayName: "Ana", locale: "en",
            items: [ItemRequest(name: "Latte", size: "tall", quantity: 1, modifiers: [])], eta: Self.now)
        #expect(try keys(place) == (try document.keys(of: "PlaceOrder").properties))
        #expect(try keys(place.items[0]) == (try document.keys(of: "OrderItem").properties))
        let event = OrderEventRequest(type: "delayed", expectedVersion: 1, barista: "Sam", eta: Self.now, reason: "r", pickupPoint: "p")
        #expect(try keys(event) == (try document.oneOfKeys("OrderEvent")))
        let store = StorePutRequest(
            name: "Market St", timezone: "UTC", readyExpiryMinutes: 120, queuedExpiryMinutes: 240,
            location: StoreLocation(latitude: 37.7936, longitude: -122.3958))
        #expect(try keys(store) == (try document.keys(of: "StorePut").properties))
        #expect(
            try keys(ActivityTokenRequest(token: "ab", environment: .sandbox, bundleID: "cafe.crema.example", frequentUpdates: false))
                == (try document.keys(of: "ActivityTokenPut").properties))
        #expect(
            try keys(CustomerTokenRequest(environment: .production, replaces: "ab", bundleID: "cafe.crema.example"))
                == (try document.keys(of: "CustomerTokenPut").properties))
        #expect(try keys(StreamTicketRequest(storeID: "market-st")) == (try document.keys(of: "StreamTicketRequest").properties))
        #expect(try keys(StreamTicketResponse(ticket: "t", storeID: "s", expiresAt: Self.now)) == (try document.keys(of: "StreamTicket").properties))
    }

    @Test("errors and health write their schemas keys") func errorsAndHealthWriteTheirSchemasKeys() throws {
        let error = APIError.invalidField(field: "eta", reason: "is required").document
        #expect(try keys(error) == (try document.keys(of: "Error").properties))
        #expect(try keys(error.error) == (try document.keys(document.property("error", of: "Error")).properties))
        #expect(try keys(Liveness(status: "ok")) == (try document.keys(of: "Liveness").properties))
        let ready = Readiness(status: "ready", database: "ok", migrations: .init(applied: [1], pending: []))
        #expect(try keys(ready) == (try document.keys(of: "Readiness").properties))
    }

    @Test("the customers answers write exactly the keys of their schemas") func theCustomersAnswersWriteExactlyTheKeysOfTheirSchemas() throws {
        let order = OrderResponse(try Self.order(), projection: .some(["status": "preparing"]))
        let (viewKeys, viewRequired) = try document.keys(of: "CustomerOrderView")
        #expect(try keys(order) == viewKeys)
        #expect(viewRequired.isSubset(of: try keys(order)))
        #expect(try keys(CustomerOrdersResponse(orders: [order])) == (try document.keys(of: "CustomerOrders").properties))
        let delivered = DeliveredActivityState(
            event: "update", timestamp: 1_795_000_000, contentState: ["status": "ready"], staleDate: nil, dismissalDate: nil,
            deliveredAt: Self.now)
        let (deliveredKeys, deliveredRequired) = try document.keys(of: "DeliveredActivityState")
        #expect(try keys(delivered) == deliveredKeys)
        #expect(deliveredRequired == deliveredKeys)
        for answer in [CustomerOrderResponse(order: order, lastDelivered: delivered), CustomerOrderResponse(order: order, lastDelivered: nil)] {
            #expect(try keys(answer) == (try document.keys(of: "CustomerOrder").properties))
        }
        let entry = RelevanceEntry(
            orderID: UUID(), storeID: "market-st", interval: RelevanceInterval(start: Self.now, end: Self.now.addingTimeInterval(1800)), location: nil)
        let (entryKeys, entryRequired) = try document.keys(of: "RelevanceEntry")
        #expect(try keys(entry) == entryKeys)
        #expect(entryRequired == entryKeys)
        #expect(try keys(RelevanceResponse(entries: [entry])) == (try document.keys(of: "Relevance").properties))
        let window = RelevanceWindow(eta: Self.now, readySince: nil)
        #expect(try keys(window) == (try document.keys(of: "RelevanceWindow").properties))
        for feed in [WidgetFeedResponse(order: order, relevance: window, openOrders: 1), WidgetFeedResponse(order: nil, relevance: nil, openOrders: 0)] {
            #expect(try keys(feed) == (try document.keys(of: "WidgetFeed").properties))
        }
        let events = try document.schema("DeliveredActivityState")["properties"] as? [String: Any]
        #expect(Set((events?["event"] as? [String: Any])?["enum"] as? [String] ?? []) == Set(LiveActivityEvent.allCases.map(\.rawValue)))
    }

    @Test("a relevance window opens before the ETA and a ready order is relevant from when it became ready") func aRelevanceWindowOpensBeforeTheETAAndAReadyOrderIsRelevantFromWhenItBecameReady() {
        let eta = Self.now
        let waiting = RelevanceWindow(eta: eta, readySince: nil)
        #expect(waiting.start == eta.addingTimeInterval(-RelevanceWindow.lead))
        #expect(waiting.end == eta.addingTimeInterval(RelevanceWindow.trail))
        let early = RelevanceWindow(eta: eta, readySince: eta.addingTimeInterval(-3600))
        #expect(early.start == eta.addingTimeInterval(-3600))
        #expect(early.end == eta.addingTimeInterval(RelevanceWindow.trail))
        let late = RelevanceWindow(eta: eta, readySince: eta.addingTimeInterval(600))
        #expect(late.end == eta.addingTimeInterval(600 + RelevanceWindow.trail))
    }

    @Test("every customer token refusal is documented with its code") func everyCustomerTokenRefusalIsDocumentedWithItsCode() throws {
        let responses = (document.root["components"] as? [String: Any])?["responses"] as? [String: Any]
        let description = try #require((responses?["CustomerUnauthorized"] as? [String: Any])?["description"] as? String)
        for refusal in CustomerTokenRefusal.allCases { #expect(description.contains("`\(refusal.code)`"), "\(refusal.code)") }
        #expect(APIError.customerToken(.expired).statusCode == 401)
        #expect(APIError.customerTokenRequired.statusCode == 403)
    }

    @Test("every enum the document lists is the swift enums cases") func everyEnumTheDocumentListsIsTheSwiftEnumsCases() throws {
        func values(_ name: String) throws -> Set<String> { Set(try document.schema(name)["enum"] as? [String] ?? []) }
        #expect(try values("OrderState") == Set(OrderState.allCases.map(\.rawValue)))
        #expect(try values("Role") == Set(Role.keyRoles.map(\.rawValue)))
        #expect(try values("EventRole") == Set(Role.allCases.map(\.rawValue)))
        #expect(try values("APNsEnvironment") == Set(APNsEnvironment.allCases.map(\.rawValue)))
        #expect(try values("RecordedEventType") == Set(OrderEventType.allCases.map(\.rawValue)))
    }

    @Test("an answer decodes back into the type that wrote it") func anAnswerDecodesBackIntoTheTypeThatWroteIt() throws {
        let order = try Self.order()
        let data = try WireCoding.encoder.encode(OrderResponse(order, projection: .some(nil)))
        let decoded = try WireCoding.decoder.decode(OrderResponse.self, from: data)
        #expect(decoded.id == order.id)
        #expect(decoded.allowedEvents == order.allowedEvents)
        #expect(decoded.projection == .some(nil))
        #expect(try WireCoding.encoder.encode(decoded) == data)
    }
}

/// Timestamps survive a round trip through their own text, so a client that re-encodes an answer repeats it.
@Suite struct WireCodingTests {
    @Test("a timestamp read back is written the same", arguments: ["2026-11-22T23:18:19.790Z", "2026-11-22T23:18:19.001Z", "2026-11-22T23:18:19.000Z", "1999-12-31T23:59:59.999Z"])
    func aTimestampReadBackIsWrittenTheSame(_ text: String) throws {
        let date = try #require(WireCoding.parseRFC3339(text))
        #expect(WireCoding.rfc3339(date) == text)
    }

    @Test("a timestamp is rounded to the nearest millisecond in UTC") func aTimestampIsRoundedToTheNearestMillisecondInUTC() {
        #expect(WireCoding.rfc3339(Date(timeIntervalSince1970: 1.0006)) == "1970-01-01T00:00:01.001Z")
        #expect(WireCoding.rfc3339(Date(timeIntervalSince1970: 59.9996)) == "1970-01-01T00:01:00.000Z")
    }

    @Test("timestamps across leap days centuries and the epoch are written by the calendar") func timestampsAcrossLeapDaysCenturiesAndTheEpochAreWrittenByTheCalendar() {
        let cases: [(TimeInterval, String)] = [
            (0, "1970-01-01T00:00:00.000Z"), (-0.001, "1969-12-31T23:59:59.999Z"), (-86_400.5, "1969-12-30T23:59:59.500Z"),
            (951_868_799.999, "2000-02-29T23:59:59.999Z"), (951_868_800, "2000-03-01T00:00:00.000Z"),
            (4_107_542_399.9996, "2100-03-01T00:00:00.000Z"), (4_107_456_000, "2100-02-28T00:00:00.000Z"),
            (1_709_164_800, "2024-02-29T00:00:00.000Z"), (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
            (-12_212_553_600, "1583-01-01T00:00:00.000Z"), (-2_208_988_800, "1900-01-01T00:00:00.000Z"),
        ]
        for (seconds, text) in cases {
            #expect(WireCoding.rfc3339(Date(timeIntervalSince1970: seconds)) == text, "\(seconds)")
        }
    }

    /// The arithmetic against Foundation's own calendar rendering, the way the writer worked before it: the same text
    /// for instants from 1583 to 9999, for instants before 1583 (the format style's own, its calendar Julian there)
    /// and for milliseconds that round across a second's edge.
    @Test("the calendar arithmetic writes what the format style writes") func theCalendarArithmeticWritesWhatTheFormatStyleWrites() {
        func formatStyle(_ date: Date) -> String {
            let millis = (date.timeIntervalSince1970 * 1000).rounded()
            let seconds = (millis / 1000).rounded(.down)
            let fraction = Int(millis - seconds * 1000)
            let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
            return whole.dropLast() + "." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + String(fraction) + "Z"
        }
        // 1583-01-01 to 9999-12-31, in milliseconds, where the arithmetic writes the text; and a few thousand outside,
        // where the format style still does.
        var generator = SeededGenerator(seed: 2026)
        var dates = (0..<20_000).map { _ in
            Date(timeIntervalSince1970: Double(generator.next() % 265_614_854_400_000) / 1000 - 12_212_553_600 + 0.0004)
        }
        dates += (0..<2_000).map { _ in Date(timeIntervalSince1970: -12_212_553_600 - Double(generator.next() % 50_000_000_000)) }
        dates += (0..<2_000).map { _ in Date(timeIntervalSince1970: Double(generator.next() % 4_000_000_000) + 0.9995 + Double(generator.next() % 10) / 10_000) }
        let differing = dates.filter { WireCoding.rfc3339($0) != formatStyle($0) }
        #expect(differing.count == 0, "first: \(differing.prefix(3).map { "\($0.timeIntervalSince1970): \(WireCoding.rfc3339($0)) vs \(formatStyle($0))" })")
    }
}

/// Error sentences read as English whatever the role.
@Suite struct APIErrorMessageTests {
    @Test("a refused role is named with the right article") func aRefusedRoleIsNamedWithTheRightArticle() {
        #expect(APIError.forbidden(role: .app, allowed: [.pos]).message == "An app key cannot do this; it needs a pos key.")
        #expect(
            APIError.forbidden(role: .pos, allowed: [.app, .barista]).message
                == "A pos key cannot do this; it needs a barista or an app key.")
    }
}

extension WireContractTests {
    @Test("the administration types write exactly the keys of their schemas") func theAdministrationTypesWriteExactlyTheKeysOfTheirSchemas() throws {
        #expect(try keys(TenantPutRequest(name: "Harbor")) == (try document.keys(of: "TenantPut").properties))
        let tenant = TenantResponse(id: "harbor", name: "Harbor", defaultBundleID: "com.harbor", createdAt: Self.now)
        #expect(try keys(tenant) == (try document.keys(of: "Tenant").properties))
        #expect(try keys(TenantListResponse(tenants: [tenant])) == (try document.keys(of: "TenantList").properties))
        #expect(try keys(AppPutRequest(teamID: "HARBORTEAM")) == (try document.keys(of: "AppPut").properties))
        let app = AppResponse(tenant: "harbor", bundleID: "com.harbor", teamID: "HARBORTEAM", createdAt: Self.now)
        #expect(try keys(app) == (try document.keys(of: "App").properties))
        #expect(try keys(AppListResponse(apps: [app])) == (try document.keys(of: "AppList").properties))
        #expect(
            try keys(APNsKeyCreateRequest(keyID: "HARBORKEY1", p8: "p", p8Path: "/p", active: true))
                == (try document.keys(of: "APNsKeyCreate").properties))
        let key = APNsKeyResponse(
            bundleID: "com.harbor", keyID: "HARBORKEY1", teamID: "HARBORTEAM", storage: "database", fingerprint: "f", state: "active",
            createdAt: Self.now, activatedAt: Self.now, retiredAt: Self.now, rejectedAt: Self.now, rejectedReason: "r")
        #expect(try keys(key) == (try document.keys(of: "APNsKey").properties))
        #expect(try keys(APNsKeyListResponse(keys: [key])) == (try document.keys(of: "APNsKeyList").properties))
        #expect(
            try keys(APIKeyCreateRequest(role: "pos", stores: ["s1"], expiresAt: Self.now)) == (try document.keys(of: "APIKeyCreate").properties))
        let apiKey = APIKeyResponse(
            id: "0123456789abcdef", tenant: "harbor", role: "pos", stores: ["s1"], createdAt: Self.now, expiresAt: Self.now,
            revokedAt: Self.now, rotatedFrom: "fedcba9876543210", key: "crema_…")
        #expect(try keys(apiKey) == (try document.keys(of: "APIKey").properties))
        #expect(try keys(APIKeyListResponse(keys: [apiKey])) == (try document.keys(of: "APIKeyList").properties))
        let settings = CustomerTokenSettingsPutRequest(
            issuer: "https://harbor.example", audience: "crema", keys: [.init(algorithm: "hs256", secret: "s", publicKey: "p")])
        #expect(try keys(settings) == (try document.keys(of: "CustomerTokenSettingsPut").properties))
        let answer = CustomerTokenSettingsResponse(
            tenant: "harbor", issuer: "i", audience: "a", keys: [.init(algorithm: "hs256", fingerprint: "f")], updatedAt: Self.now)
        #expect(try keys(answer) == (try document.keys(of: "CustomerTokenSettings").properties))
    }
}
