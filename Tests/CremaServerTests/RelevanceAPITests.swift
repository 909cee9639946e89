import CremaAPI
import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Relevance for the watch (issue #33, part 5) through the router and PostgreSQL: a store's `location`,
/// `GET /v1/me/relevance`, and the widget push when an order's interval moves.
@Suite(.serialized) struct RelevanceAPITests {
    typealias F = CustomerTokenFixtures
    static let widgetToken = String(repeating: "c3", count: 32)
    static let marketSt = #"{"latitude":37.7936,"longitude":-122.3958}"#

    static func putStore(_ api: APIClient, _ id: String, _ extra: String = "") async throws -> APIResponse {
        try await api.send(.put, "/v1/stores/\(id)", as: .pos, body: #"{"name":"Market St","timezone":"UTC"\#(extra)}"#)
    }

    /// Places an order for `customer` at `store`, due in `minutes`; returns its id and the answer's `eta` and `placed_at`.
    static func place(_ api: APIClient, store: String, customer: String, minutes: Double = 10) async throws -> (id: String, eta: Date, placedAt: Date) {
        let body = """
            {"store_id":"\(store)","pos_ref":"T-1","customer_ref":"\(customer)","display_name":"Ana","locale":"en",
             "items":[{"name":"Oat latte","quantity":1}],"eta":"\(Date().addingTimeInterval(minutes * 60).formatted(.iso8601))"}
            """
        let response = try await api.post("/v1/orders", as: .pos, body)
        guard let id = response.json["id"] as? String, let eta = (response.json["eta"] as? String).flatMap(WireCoding.parseRFC3339),
            let placedAt = (response.json["placed_at"] as? String).flatMap(WireCoding.parseRFC3339)
        else { throw APIClient.HarnessError.unexpected(response.text) }
        return (id, eta, placedAt)
    }

    static func relevance(_ api: APIClient, _ customer: String) async throws -> [[String: Any]] {
        let response = try await api.send(.get, "/v1/me/relevance", rawKey: "Bearer \(try await F.token(for: customer))")
        #expect(response.status == .ok)
        return try #require(response.json["entries"] as? [[String: Any]])
    }

    static func date(_ value: Any?) -> Date? { (value as? String).flatMap(WireCoding.parseRFC3339) }

    /// `[latitude, longitude]` of a JSON location object.
    static func place(_ value: Any?) -> [Double]? {
        guard let object = value as? [String: Any], let latitude = object["latitude"] as? NSNumber, let longitude = object["longitude"] as? NSNumber
        else { return nil }
        return [latitude.doubleValue, longitude.doubleValue]
    }

    static func location(_ db: TestDatabase, _ store: String) async throws -> String {
        try await db.scalar("SELECT coalesce(latitude::text || ',' || longitude::text, 'none') FROM stores WHERE store_id = \(store)")
    }

    @Test("a store's location is stored, kept when the field is left out and cleared by null") func aStoresLocationIsStoredKeptWhenTheFieldIsLeftOutAndClearedByNull() async throws {
        try await APIHarness.run { api, db in
            let created = try await Self.putStore(api, "market-st", #","location":\#(Self.marketSt)"#)
            #expect(created.status == .created)
            #expect(Self.place(created.json["location"]) == [37.7936, -122.3958])
            #expect(try await Self.location(db, "market-st") == "37.7936,-122.3958")

            let renamed = try await Self.putStore(api, "market-st")
            #expect(renamed.status == .ok)
            #expect(Self.place(renamed.json["location"]) == [37.7936, -122.3958])
            #expect(try await Self.location(db, "market-st") == "37.7936,-122.3958")

            let cleared = try await Self.putStore(api, "market-st", #","location":null"#)
            #expect(cleared.status == .ok)
            #expect(cleared.json.keys.contains("location") == false)
            #expect(try await Self.location(db, "market-st") == "none")
        }
    }

    @Test("a location outside the earth's ranges is refused with a stable code and changes nothing") func aLocationOutsideTheEarthsRangesIsRefusedWithAStableCodeAndChangesNothing() async throws {
        try await APIHarness.run { api, db in
            #expect(try await Self.putStore(api, "market-st", #","location":\#(Self.marketSt)"#).status == .created)
            for (location, field) in [
                (#"{"latitude":90.5,"longitude":0}"#, "location.latitude"), (#"{"latitude":-91,"longitude":0}"#, "location.latitude"),
                (#"{"latitude":0,"longitude":180.5}"#, "location.longitude"), (#"{"latitude":0,"longitude":-1e300}"#, "location.longitude"),
            ] {
                let refused = try await api.send(
                    .put, "/v1/stores/market-st", as: .pos, body: #"{"name":"Renamed","timezone":"UTC","location":\#(location)}"#)
                #expect(refused.status == .unprocessableContent, "\(location)")
                #expect(refused.errorCode == "invalid_value")
                #expect(refused.errorDetails["field"] as? String == field)
            }
            for location in [#"{"latitude":"north","longitude":0}"#, #"{"latitude":1}"#, #""here""#] {
                let unreadable = try await api.send(
                    .put, "/v1/stores/market-st", as: .pos, body: #"{"name":"Renamed","timezone":"UTC","location":\#(location)}"#)
                #expect(unreadable.status == .badRequest, "\(location)")
                #expect(unreadable.errorCode == "invalid_field")
            }
            #expect(try await db.scalar("SELECT name FROM stores WHERE store_id = 'market-st'", as: String.self) == "Market St")
            #expect(try await Self.location(db, "market-st") == "37.7936,-122.3958")
            // A refused store that did not exist is not created either.
            #expect(try await Self.putStore(api, "new-st", #","location":{"latitude":100,"longitude":0}"#).status == .unprocessableContent)
            #expect(try await db.scalar("SELECT count(*) FROM stores WHERE store_id = 'new-st'", as: Int.self) == 0)
        }
    }

    @Test("relevance lists each open order of the customer from its placement to the end of its pickup window with its store's place") func relevanceListsEachOpenOrderOfTheCustomerFromItsPlacementToTheEndOfItsPickupWindowWithItsStoresPlace() async throws {
        try await APIHarness.run { api, _ in
            _ = try await Self.putStore(api, "market-st", #","location":\#(Self.marketSt)"#)
            _ = try await Self.putStore(api, "pier-st")
            let located = try await Self.place(api, store: "market-st", customer: "alice")
            let unlocated = try await Self.place(api, store: "pier-st", customer: "alice", minutes: 20)
            let canceled = try await Self.place(api, store: "market-st", customer: "alice")
            _ = try await api.post("/v1/orders/\(canceled.id)/events", as: .pos, #"{"type":"canceled","reason":"left"}"#)
            _ = try await Self.place(api, store: "market-st", customer: "bob")

            let entries = try await Self.relevance(api, "alice")
            #expect(entries.compactMap { $0["order_id"] as? String }.sorted() == [located.id, unlocated.id].sorted())
            for (order, store, place) in [(located, "market-st", true), (unlocated, "pier-st", false)] {
                let entry = try #require(entries.first { $0["order_id"] as? String == order.id })
                #expect(entry["store_id"] as? String == store)
                #expect(Self.date(entry["start"]) == order.placedAt)
                #expect(Self.date(entry["end"]) == order.eta.addingTimeInterval(30 * 60))
                if place {
                    #expect(Self.place(entry["location"]) == [37.7936, -122.3958])
                } else {
                    #expect(entry["location"] is NSNull)
                }
            }
            #expect(try await Self.relevance(api, "carol").isEmpty)
        }
    }

    @Test("a delay moves the relevance interval and sends the customer's widget push saying the relevance changed") func aDelayMovesTheRelevanceIntervalAndSendsTheCustomersWidgetPushSayingTheRelevanceChanged() async throws {
        try await APIHarness.run { api, _ in
            _ = try await Self.putStore(api, "market-st")
            let order = try await Self.place(api, store: "market-st", customer: "alice")
            // Registered after the placement, so no reload of the placement is waiting to absorb the delay's.
            let widget = try await api.send(
                .put, "/v1/me/tokens/widget/\(Self.widgetToken)", body: #"{"environment":"production"}"#,
                rawKey: "Bearer \(try await F.token(for: "alice"))")
            #expect(widget.status == .created)

            let started = try await api.post("/v1/orders/\(order.id)/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            #expect(started.status == .ok)
            let later = order.eta.addingTimeInterval(600)
            let delayed = try await api.post(
                "/v1/orders/\(order.id)/events", as: .pos, #"{"type":"delayed","eta":"\#(WireCoding.rfc3339(later))","reason":"machine"}"#)
            #expect(delayed.status == .ok)

            let log = try await api.send(.get, "/v1/orders/\(order.id)/deliveries", as: .pos)
            let widgetRows = try #require(log.json["deliveries"] as? [[String: Any]]).filter { $0["target_kind"] as? String == "widget" }
            #expect(widgetRows.map { "\($0["order_event"] ?? "")/\($0["reason_code"] ?? "")/\($0["state"] ?? "")" } == [
                "started/widget_unchanged/skipped", "delayed/widget_relevance_changed/pending",
            ])
            let entry = try #require(try await Self.relevance(api, "alice").first)
            #expect(Self.date(entry["end"]) == later.addingTimeInterval(30 * 60))
        }
    }
}
