import CremaAPNsProtocol
import AsyncHTTPClient
import CremaAPI
import CremaClock
import CremaCore
import CremaPostgres
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The dashboard stream over real HTTP (a live server on port 0) and real LISTEN/NOTIFY. Waits use generous
/// deadlines; nothing passes or fails on timing.
@Suite(.serialized, .timeLimit(.minutes(2))) struct StreamAPITests {
    @Test("a change appears on the stream with its state version and projection") func aChangeAppearsOnTheStreamWithItsStateVersionAndProjection() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let stream = try await h.open(as: .dashboard)
            let id = try await h.api.placeOrder()
            let placed = try await stream.waitFor { $0.order(id)?["version"] as? Int == 1 }
            #expect(placed.name == "order")
            #expect(placed.json["state"] as? String == "queued")
            #expect(placed.json["projection"] is [String: Any])
            _ = try await h.api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            let started = try await stream.waitFor { $0.order(id)?["version"] as? Int == 2 }
            #expect(started.json["state"] as? String == "preparing")
            let projection = try #require(started.json["projection"] as? [String: Any])
            let detail = try await h.api.send(.get, "/v1/orders/\(id)", as: .dashboard)
            #expect(NSDictionary(dictionary: projection) == NSDictionary(dictionary: detail.json["projection"] as? [String: Any] ?? [:]))
            #expect(Int64(started.id)! > Int64(placed.id)!)
            stream.close()
        }
    }

    @Test("last event ID resumes with exactly the missed changes") func lastEventIDResumesWithExactlyTheMissedChanges() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let first = try await h.open(as: .dashboard)
            let a = try await h.api.placeOrder()
            let seen = try await first.waitFor { $0.order(a) != nil }
            first.close()
            // Missed while disconnected: two new orders and a change to the one already seen.
            let b = try await h.api.placeOrder()
            let c = try await h.api.placeOrder()
            _ = try await h.api.post("/v1/orders/\(a)/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            let resumed = try await h.open(as: .dashboard, lastEventID: seen.id)
            _ = try await resumed.waitFor { $0.order(a)?["version"] as? Int == 2 }
            // Nothing more is owed: an unrelated later change arrives next, after exactly the missed three.
            let d = try await h.api.placeOrder()
            _ = try await resumed.waitFor { $0.order(d) != nil }
            let ids = resumed.events.map { $0.json["id"] as? String ?? "" }
            #expect(ids == [b, c, a, d])
            resumed.close()
        }
    }

    /// On virtual time: the heartbeat is 15 s of the hub's clock, and the test moves that clock instead of waiting. A tick
    /// before the 15 s writes nothing; one after writes the keepalive.
    @Test("a quiet stream sends keepalive comments") func aQuietStreamSendsKeepaliveComments() async throws {
        let clock = TestClock(Date())
        try await StreamHarness.run(heartbeat: .seconds(15), tickEvery: .seconds(3600), clock: clock.crema) { h in
            try await h.api.createStore()
            let response = try await h.http.execute(
                h.request(as: .dashboard, ticket: nil, store: "market-st", lastEventID: nil), deadline: .now() + .seconds(60))
            var body = response.body.makeAsyncIterator()
            var text = ""
            while !text.hasSuffix(": connected\n\n"), let buffer = try await body.next() { text += String(buffer: buffer) }
            #expect(text == "retry: 2000\n: connected\n\n")
            await clock.advance(14)
            #expect(await h.hub.tick().woken == 1)
            await clock.advance(1)
            #expect(await h.hub.tick().woken == 1)
            while !text.contains(": keepalive\n\n"), let buffer = try await body.next() { text += String(buffer: buffer) }
            #expect(text == "retry: 2000\n: connected\n\n: keepalive\n\n", "nothing is written before the heartbeat, the keepalive after it")
        }
    }

    @Test("a client that reads nothing for a while gets every change in order when it reads again") func aClientThatReadsNothingForAWhileGetsEveryChangeInOrderWhenItReadsAgain() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            // The response is open but its body is not read while more orders than one catch-up page are placed.
            let response = try await h.http.execute(
                h.request(as: .dashboard, ticket: nil, store: "market-st", lastEventID: nil), deadline: .now() + .seconds(120))
            var placed: [String] = []
            for _ in 0..<(StreamRepository.streamPageSize + 10) { placed.append(try await h.api.placeOrder()) }
            let stream = SSEStream(body: response.body)
            _ = try await stream.waitFor { $0.order(placed.last!) != nil }
            let events = stream.events
            #expect(events.map { $0.json["id"] as? String ?? "" } == placed)
            let cursors = events.compactMap { Int64($0.id) }
            #expect(cursors == cursors.sorted() && Set(cursors).count == cursors.count)
            stream.close()
        }
    }

    @Test("a committed change is read at once while an unrelated transaction still runs")
    func aCommittedChangeIsReadAtOnceWhileAnUnrelatedTransactionStillRuns() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let store = OrderService(database: CremaDatabase(pool: h.db.pool, clock: .system), clock: .system)
            // The cursor is the store's own position (migration 023): a transaction that is not one of the store's events
            // (a report, a migration, another store's command) holds nothing back, as the oldest running transaction did.
            let seen = try await h.db.pool.withTransaction { connection in
                _ = try await connection.query("SELECT pg_current_xact_id()")
                let id = try await h.api.placeOrder()
                let changes = try await store.database.stream.streamChanges(store: "market-st", tenant: "default", after: 0)
                return changes.map { $0.order.id.uuidString.lowercased() } == [id]
            }
            #expect(seen)
        }
    }

    @Test("the stream refuses no key and every other role") func theStreamRefusesNoKeyAndEveryOtherRole() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            #expect(try await h.status(as: nil) == 401)
            for role in [Role.pos, .barista, .app] { #expect(try await h.status(as: role) == 403) }
            #expect(try await h.status(as: nil, ticket: String(repeating: "0", count: 64)) == 401)
        }
    }

    @Test("a spent ticket is refused as an invalid ticket saying how to get a new one not as a missing API key") func aSpentTicketIsRefusedAsAnInvalidTicketSayingHowToGetANewOneNotAsAMissingAPIKey() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let ticket = try #require(try await h.api.post("/v1/stream/tickets", as: .dashboard, #"{"store_id":"market-st"}"#).json["ticket"] as? String)
            let stream = try await h.open(as: nil, ticket: ticket)
            stream.close()
            let (status, code, message) = try await h.refusal(ticket: ticket)
            #expect(status == 401)
            #expect(code == "invalid_stream_ticket")
            #expect(message.contains("spent") && message.contains("POST /v1/stream/tickets"), "\(message)")
            #expect(try await h.refusal(ticket: String(repeating: "0", count: 64)).code == "invalid_stream_ticket")
            // No ticket at all is still a missing key.
            #expect(try await h.refusal(ticket: nil).code == "unauthorized")
        }
    }

    @Test("two subscribers both receive the change") func twoSubscribersBothReceiveTheChange() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let one = try await h.open(as: .dashboard)
            let two = try await h.open(as: .dashboard)
            let id = try await h.api.placeOrder()
            _ = try await one.waitFor { $0.order(id) != nil }
            _ = try await two.waitFor { $0.order(id) != nil }
            one.close()
            two.close()
        }
    }

    @Test("a change committed by another crema process is seen") func aChangeCommittedByAnotherCremaProcessIsSeen() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let stream = try await h.open(as: .dashboard)
            // A second application with its own pool and change feed on the same database: another `crema` process.
            let pool = PostgresPool(.init(conninfo: h.db.conninfo, maxConnections: 2))
            let other = CremaApplication.build(
                try APIHarness.dependencies(pool: pool),
                host: "127.0.0.1", port: 0, logger: Logger(label: "other"))
            let id = try await other.test(.router) { client in try await APIClient(client: client).placeOrder() }
            _ = try await stream.waitFor { $0.order(id) != nil }
            stream.close()
        }
    }

    @Test("a ticket opens one stores stream once and only for the dashboard role") func aTicketOpensOneStoresStreamOnceAndOnlyForTheDashboardRole() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            for role in [Role.pos, .barista, .app] {
                #expect(try await h.api.post("/v1/stream/tickets", as: role, #"{"store_id":"market-st"}"#).status == .forbidden)
            }
            #expect(try await h.api.send(.post, "/v1/stream/tickets", body: #"{"store_id":"market-st"}"#).status == .unauthorized)
            let issued = try await h.api.post("/v1/stream/tickets", as: .dashboard, #"{"store_id":"market-st"}"#)
            #expect(issued.status == .created)
            let ticket = try #require(issued.json["ticket"] as? String)
            // A ticket is bound to its store, then opens that store's stream once.
            #expect(try await h.status(as: nil, ticket: ticket, store: "other-store") == 401)
            // It names its tenant, and is looked up among that tenant's tickets only: another tenant's name finds nothing.
            #expect(ticket.hasPrefix("default."))
            #expect(try await h.status(as: nil, ticket: "harbor" + ticket.drop { $0 != "." }) == 401)
            let stream = try await h.open(as: nil, ticket: ticket)
            let id = try await h.api.placeOrder()
            _ = try await stream.waitFor { $0.order(id) != nil }
            stream.close()
            #expect(try await h.status(as: nil, ticket: ticket) == 401)
        }
    }

    @Test("an expired ticket is refused") func anExpiredTicketIsRefused() async throws {
        try await StreamHarness.run { h in
            try await h.api.createStore()
            let ticket = try #require(try await h.api.post("/v1/stream/tickets", as: .dashboard, #"{"store_id":"market-st"}"#).json["ticket"] as? String)
            _ = try await h.db.pool.withConnection { connection in
                try await connection.query("UPDATE stream_tickets SET expires_at = now() - interval '1 second'")
            }
            let refusal = try await h.refusal(ticket: ticket)
            #expect(refusal.status == 401 && refusal.code == "invalid_stream_ticket")
        }
    }
}

/// A live application whose stream hub is woken by its change feed (with a LISTEN connection), and an HTTP client for
/// streams.
struct StreamHarness: Sendable {
    let api: APIClient
    let db: TestDatabase
    let port: Int
    let http: HTTPClient
    /// The server's hub, whose tick a test runs by hand (`tickEvery` long enough that its own never comes).
    let hub: StreamHub

    /// `readsHeads`: the hub ticks as in production (one read of every store's head, keys checked); else it wakes every
    /// stream on each tick, as tests that count on the tick's wake-up expect.
    static func run(
        _ label: String = #function, heartbeat: Duration = .seconds(15), readsHeads: Bool = false, tickEvery: Duration = .seconds(2),
        clock: CremaClock = .system, _ body: @escaping @Sendable (StreamHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.with(label) { db in
            var dependencies = try APIHarness.dependencies(pool: db.pool, conninfo: db.conninfo)
            let changes = try #require(dependencies.service.database.changes)
            dependencies.streamHeartbeat = heartbeat
            let hub = StreamHub(
                changes: changes, stream: readsHeads ? dependencies.service.database.stream : nil, sweepInterval: tickEvery, clock: clock, logger: Logger(label: "test"))
            dependencies.streamHub = hub
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                try await LiveServer.serve(dependencies) { port in
                    try await body(StreamHarness(api: .live(http, port: port), db: db, port: port, http: http, hub: hub))
                }
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }

    func request(as role: Role?, key: String? = nil, ticket: String?, store: String, lastEventID: String?) -> HTTPClientRequest {
        var query = "store=\(store)"
        if let ticket { query += "&ticket=\(ticket)" }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/stream?\(query)")
        if let role { request.headers.add(name: "Authorization", value: "Bearer \(APIHarness.keys[role]!)") }
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        return request
    }

    /// The status of a stream request whose stream is then dropped.
    func status(as role: Role?, ticket: String? = nil, store: String = "market-st") async throws -> Int {
        let response = try await http.execute(request(as: role, ticket: ticket, store: store, lastEventID: nil), deadline: .now() + .seconds(60))
        return Int(response.status.code)
    }

    /// The status, error code and message of a stream request refused without a key.
    func refusal(ticket: String?, store: String = "market-st") async throws -> (status: Int, code: String, message: String) {
        let response = try await http.execute(request(as: nil, ticket: ticket, store: store, lastEventID: nil), deadline: .now() + .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 16)
        let document = try JSONDecoder().decode(APIErrorDocument.self, from: Data(String(buffer: body).utf8))
        return (Int(response.status.code), document.error.code, document.error.message)
    }

    /// Opens a stream and starts reading it; returns once the server has answered 200.
    func open(
        as role: Role?, key: String? = nil, ticket: String? = nil, store: String = "market-st", lastEventID: String? = nil
    ) async throws -> SSEStream {
        let response = try await http.execute(
            request(as: role, key: key, ticket: ticket, store: store, lastEventID: lastEventID), deadline: .now() + .seconds(120))
        guard response.status == .ok else { throw StreamFailure.status(Int(response.status.code)) }
        #expect(response.headers.first(name: "content-type")?.hasPrefix("text/event-stream") == true)
        return SSEStream(body: response.body)
    }

    enum StreamFailure: Error { case status(Int), notSeen(String) }
}

extension APIClient {
    /// Over TCP to a live server on `port`, through AsyncHTTPClient.
    static func live(_ http: HTTPClient, port: Int) -> APIClient {
        APIClient { uri, method, headers, body in
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(uri)")
            request.method = HTTPMethod(rawValue: method.rawValue)
            for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
            if let body { request.body = .bytes(body) }
            let response = try await http.execute(request, timeout: .seconds(60))
            var fields = HTTPFields()
            for (name, value) in response.headers {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
            return APIResponse(status: HTTPResponse.Status(code: Int(response.status.code)), headers: fields, text: text)
        }
    }
}

/// One parsed Server-Sent Event.
struct SSEEvent: Sendable {
    var id: String
    var name: String
    var data: String
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:] }
}

/// Reads a stream in the background and keeps its events.
final class SSEStream: Sendable {
    /// The events so far, and the waiters to wake at the next one (or at the stream's end).
    final class Received: Sendable {
        struct State {
            var events: [SSEEvent] = []
            var ended = false
            var waiting: [CheckedContinuation<Void, Never>] = []
        }
        let state = Mutex(State())

        func update(_ change: (inout State) -> Void) {
            let waiting = state.withLock { state in
                change(&state)
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in waiting { waiter.resume() }
        }

        /// Returns once there are more than `count` events, the stream has ended, or the task is cancelled.
        func arrival(after count: Int) async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state in
                        guard state.events.count <= count, !state.ended, !Task.isCancelled else { return true }
                        state.waiting.append(waiter)
                        return false
                    }
                    if now { waiter.resume() }
                }
            } onCancel: {
                update { _ in }
            }
        }
    }
    private let received: Received
    private let reader: Task<Void, Never>

    init(body: HTTPClientResponse.Body) {
        let received = Received()
        self.received = received
        reader = Task {
            var pending = ""
            do {
                for try await buffer in body {
                    pending += String(buffer: buffer)
                    while let end = pending.range(of: "\n\n") {
                        let block = String(pending[..<end.lowerBound])
                        pending = String(pending[end.upperBound...])
                        if let event = Self.parse(block) { received.update { $0.events.append(event) } }
                    }
                }
            } catch {}
            received.update { $0.ended = true }
        }
    }

    var events: [SSEEvent] { received.state.withLock { $0.events } }

    /// Returns once the server has ended the stream.
    func ended() async {
        while !received.state.withLock({ $0.ended }), !Task.isCancelled { await received.arrival(after: events.count) }
    }

    static func parse(_ block: String) -> SSEEvent? {
        var event = SSEEvent(id: "", name: "message", data: "")
        var hasData = false
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) where !line.hasPrefix(":") {
            if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
            if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") {
                event.data += String(line.dropFirst(6))
                hasData = true
            }
        }
        return hasData ? event : nil
    }

    /// The first event (in arrival order) that satisfies `condition`, woken by each arrival rather than polled; the
    /// stream's end fails it with the events seen so far, and the suite's time limit bounds it.
    func waitFor(_ condition: (EventView) -> Bool) async throws -> SSEEvent {
        var checked = 0
        while true {
            let (events, ended) = received.state.withLock { ($0.events, $0.ended) }
            if let event = events[checked...].first(where: { condition(EventView(event: $0)) }) { return event }
            if ended || Task.isCancelled {
                throw StreamHarness.StreamFailure.notSeen("\(ended ? "stream ended" : "cancelled"); events so far: \(events.map(\.data))")
            }
            checked = events.count
            await received.arrival(after: checked)
        }
    }

    /// Stops reading (the server ends the stream when it next fails to write, or at shutdown).
    func close() {
        reader.cancel()
    }
}

/// An event as a condition sees it: its order, if it is about `id`.
struct EventView {
    let event: SSEEvent
    func order(_ id: String) -> [String: Any]? {
        let json = event.json
        return json["id"] as? String == id ? json : nil
    }
}
