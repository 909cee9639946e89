import CremaClock
import CremaCore
import CremaPostgres
import CremaServer
import CremaService
import CremaSettings
import CremaStore
import CremaTestSupport
import Foundation
import Logging
import NIOCore
import Testing

/// A client that leaves while its request waits on the database (issue #13): the request's task is cancelled, and
/// the driver cancels the statement on the server, instead of leaving it to hold a connection and its locks.
@Suite(.timeLimit(.minutes(2))) struct ClientGoneTests {
    @Test("a client that leaves mid request has its statement cancelled on the server") func aClientThatLeavesMidRequestHasItsStatementCancelledOnTheServer() async throws {
        let (lines, line) = AsyncStream<LogEvent>.makeStream()
        try await LiveServer.run(.init(), logger: Logger(label: "test") { _ in StreamingLogHandler(line) }) { server in
            let service = OrderService(database: CremaDatabase(pool: server.db.pool, clock: .system), clock: .system)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            let placed = try await service.place(
                OrderPlacement(
                    storeID: "market-st", posRef: "T-1", customerRef: "c-1", displayName: "Ana", locale: "en", items: [OrderItem(name: "Latte")],
                    eta: Date().addingTimeInterval(600)),
                in: .default, role: .pos, request: IdempotentRequest(scope: "pos", key: "k", path: "p", body: "{}"))
            let object = try JSONSerialization.jsonObject(with: Data(placed.body.utf8)) as? [String: Any]
            let text = try #require(object?["id"] as? String)
            let id = try #require(UUID(uuidString: text))
            let version: PostgresQuery = "SELECT version FROM orders WHERE order_id = \(id)"
            let before = try await server.db.scalar(version, as: Int.self)

            // The test holds the order's row, so the event's statement waits on the server for it.
            try await server.db.pool.withTransaction { holder in
                _ = try await holder.query("SELECT 1 FROM orders WHERE tenant_id = 'default' AND order_id = \(id) FOR UPDATE")
                let body = #"{"type":"started","barista":"Sam"}"#
                let request = """
                    POST /v1/orders/\(id.uuidString.lowercased())/events HTTP/1.1\r
                    Host: crema\r
                    Authorization: Bearer \(APIHarness.keys[.barista]!)\r
                    Idempotency-Key: gone-1\r
                    Content-Type: application/json\r
                    Content-Length: \(body.utf8.count)\r
                    \r
                    \(body)
                    """
                try await server.connect().executeThenClose { _, outbound in
                    try await outbound.write(ByteBuffer(string: request))
                    // Until the server's statement waits for the row (a cancel before that would never reach the server).
                    try await server.db.untilWaiting(1)
                }
                // The client is gone. The line comes once the server answered the cancelled statement, while the row
                // is still held here: the statement stopped waiting because of the cancel.
                let cancelled = await lines.first { "\($0.message)" == "request cancelled before its answer" }
                // Cancelled on the server (query_canceled), not ended by the session's lock timeout (55P03).
                #expect(cancelled?.metadata?["error"].map { "\($0)".contains("57014") } == true, "\(String(describing: cancelled?.metadata))")
                #expect(try await server.db.waitingForLocks() == 0)
            }
            #expect(server.metric("crema_http_requests_abandoned_total") == 1)
            let after = try await server.db.scalar(version, as: Int.self)
            #expect(after == before)
            // The pool's connection serves the next request.
            try await server.answerOnNewConnection()
        }
    }

    @Test("a client that leaves between requests cancels nothing") func aClientThatLeavesBetweenRequestsCancelsNothing() async throws {
        try await LiveServer.run(.init()) { server in
            let answer = try await server.sendAndReadUntilClosed("GET /health/live HTTP/1.1\r\nHost: crema\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
            try await server.connect().executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                let answer = try await LiveServer.exchange(LiveServer.healthRequest, outbound, &iterator)
                #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
            }
            try await server.answerOnNewConnection()
            #expect(server.metric("crema_http_requests_abandoned_total") == 0)
        }
    }

    @Test("an answer the server writes raw and closes on is not counted as the client leaving") func anAnswerTheServerWritesRawAndClosesOnIsNotCountedAsTheClientLeaving() async throws {
        try await LiveServer.run(.init()) { server in
            // A CONNECT is answered in front of the encoder (no `.end` passes the handler) and the server then closes
            // the connection: its close, not the client's.
            let connect = try await server.sendAndReadUntilClosed("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
            #expect(connect.hasPrefix("HTTP/1.1 4"), "\(connect)")
            try await server.answerOnNewConnection()
            #expect(server.metric("crema_http_requests_abandoned_total") == 0)
        }
    }

}

/// Hands every log event to a stream, so a test waits for the line it expects rather than polling for it.
private struct StreamingLogHandler: LogHandler {
    let continuation: AsyncStream<LogEvent>.Continuation
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    init(_ continuation: AsyncStream<LogEvent>.Continuation) {
        self.continuation = continuation
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.metadata = metadata.merging(event.metadata ?? [:]) { $1 }
        continuation.yield(event)
    }
}
