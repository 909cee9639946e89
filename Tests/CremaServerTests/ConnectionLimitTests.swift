import CremaCore
import CremaServer
import CremaSettings
import CremaTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

/// The connection guard against a live server on a free port, spoken to over raw TCP: the bytes a stalled,
/// idle or hostile client sends that an HTTP client library never would. Each test waits for the server's
/// close (the end of the inbound stream), never for a time.
@Suite(.timeLimit(.minutes(2))) struct ConnectionLimitTests {
    @Test("a half sent request is closed by the read timeout") func aHalfSentRequestIsClosedByTheReadTimeout() async throws {
        try await LiveServer.run(.init(readTimeout: .milliseconds(300), idleTimeout: .seconds(600))) { server in
            let answer = try await server.sendAndReadUntilClosed("GET /health/live HTTP/1.1\r\nHost: crema\r\n")
            #expect(answer.isEmpty)
            #expect(server.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 1)
            #expect(server.metric(#"crema_http_connections_timed_out_total{phase="idle"}"#) == 0)
        }
    }

    @Test("a silent new connection is closed by the read timeout") func aSilentNewConnectionIsClosedByTheReadTimeout() async throws {
        try await LiveServer.run(.init(readTimeout: .milliseconds(300), idleTimeout: .seconds(600))) { server in
            let answer = try await server.sendAndReadUntilClosed("")
            #expect(answer.isEmpty)
            #expect(server.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 1)
        }
    }

    @Test("shutdown closes a connection that has sent half a request") func shutdownClosesAConnectionThatHasSentHalfARequest() async throws {
        // No request is in progress, so the shutdown does not wait for one: it closes the connection.
        let stalled = Mutex<NIOAsyncChannel<ByteBuffer, ByteBuffer>?>(nil)
        try await LiveServer.run(.init(readTimeout: .seconds(600), idleTimeout: .seconds(600))) { server in
            let channel = try await server.connect()
            try await channel.channel.writeAndFlush(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: crema\r\n"))
            stalled.withLock { $0 = channel }
        }
        let channel = try #require(stalled.withLock { $0 })
        try await channel.channel.closeFuture.get()
        #expect(!channel.channel.isActive)
    }

    @Test("stalled connections are counted as awaiting their first request until its head arrives") func stalledConnectionsAreCountedAsAwaitingTheirFirstRequestUntilItsHeadArrives() async throws {
        try await LiveServer.run(.init(readTimeout: .seconds(600), idleTimeout: .seconds(600))) { server in
            let half = "GET /health/live HTTP/1.1\r\nHost: crema\r\n"
            let connections = try await [server.connect(), server.connect(), server.connect()]
            for connection in connections { try await connection.channel.writeAndFlush(ByteBuffer(string: half)) }
            // The answer on a connection made after them proves the three were accepted and counted (`run`).
            try await server.answerOnNewConnection()
            #expect(server.metric("crema_http_connections_awaiting_first_request") == 3)

            try await connections[0].executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                let answer = try await LiveServer.exchange("\r\n", outbound, &iterator)
                #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(answer.contains("\r\nServer: crema\r\n"))
                #expect(answer.range(of: #"\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\r\n"#, options: .regularExpression) != nil)
                #expect(server.metric("crema_http_connections_awaiting_first_request") == 2)

                // The client ends its side of the second; the server answers the half head and closes it.
                try await connections[1].executeThenClose { closingInbound, _ in
                    try await connections[1].channel.close(mode: .output)
                    for try await _ in closingInbound {}
                }
                // Served after the close's clean-up on the same loop, so it no longer counts.
                #expect(try await LiveServer.exchange(LiveServer.healthRequest, outbound, &iterator).hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(server.metric("crema_http_connections_awaiting_first_request") == 1)
            }
            try await connections[2].executeThenClose { _, _ in }
        }
    }

    @Test("a connection that ends its side before sending anything is closed at once") func aConnectionThatEndsItsSideBeforeSendingAnythingIsClosedAtOnce() async throws {
        // A preconnect never used, a port check: with a 600 s read timeout, only the client's end can close it.
        try await LiveServer.run(.init(readTimeout: .seconds(600), idleTimeout: .seconds(600))) { server in
            let connection = try await server.connect()
            try await connection.executeThenClose { inbound, _ in
                try await connection.channel.close(mode: .output)  // half-closes: the client has nothing to send
                var received = ByteBuffer()
                for try await var chunk in inbound { received.writeBuffer(&chunk) }
                #expect(received.readableBytes == 0)
            }
            // Served after the close's clean-up on the same loop (`run`), by a connection that is then the only one.
            #expect(try await server.answerOnNewConnection(whileOpen: { server.metric("crema_http_connections_open") }) == 1)
            #expect(server.metric("crema_http_connections_awaiting_first_request") == 0)
            #expect(server.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 0)
        }
    }

    @Test("an idle keep alive connection is closed after the idle timeout") func anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        try await LiveServer.run(.init(readTimeout: .seconds(600), idleTimeout: .milliseconds(300))) { server in
            let answer = try await server.sendAndReadUntilClosed("GET /health/live HTTP/1.1\r\nHost: crema\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(answer.hasSuffix(#"{"status":"ok"}"#))
            #expect(server.metric(#"crema_http_connections_timed_out_total{phase="idle"}"#) == 1)
            #expect(server.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 0)
        }
    }

    @Test("a connection past the cap is refused while earlier ones are served") func aConnectionPastTheCapIsRefusedWhileEarlierOnesAreServed() async throws {
        try await LiveServer.run(.init(maxConnections: 2)) { server in
            try await server.connect().executeThenClose { firstIn, firstOut in
                try await server.connect().executeThenClose { secondIn, secondOut in
                    var first = firstIn.makeAsyncIterator()
                    var second = secondIn.makeAsyncIterator()
                    // An answer on each proves both were accepted (and counted) before the third connects.
                    #expect(try await LiveServer.exchange(LiveServer.healthRequest, firstOut, &first).hasPrefix("HTTP/1.1 200 OK"))
                    #expect(try await LiveServer.exchange(LiveServer.healthRequest, secondOut, &second).hasPrefix("HTTP/1.1 200 OK"))

                    let refused = try await server.sendAndReadUntilClosed("")
                    #expect(refused.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
                    #expect(refused.contains("Retry-After: 1\r\n"))
                    #expect(LiveServer.errorCode(refused) == "too_many_connections")
                    #expect(server.metric("crema_http_connections_refused_total") == 1)

                    #expect(try await LiveServer.exchange(LiveServer.healthRequest, firstOut, &first).hasPrefix("HTTP/1.1 200 OK"))
                    #expect(try await LiveServer.exchange(LiveServer.healthRequest, secondOut, &second).hasPrefix("HTTP/1.1 200 OK"))
                    #expect(server.metric("crema_http_connections_open") == 2)
                }
            }
        }
    }

    @Test("connect is answered with method not allowed") func connectIsAnsweredWithMethodNotAllowed() async throws {
        try await LiveServer.run(.init()) { server in
            let answer = try await server.sendAndReadUntilClosed("CONNECT /v1/orders HTTP/1.1\r\nHost: crema\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
            #expect(answer.contains("Allow: GET, POST\r\n"))
            #expect(LiveServer.errorCode(answer) == "method_not_allowed")
            // Its head arrived whole, so it no longer awaits one while its answer lingers.
            #expect(server.metric("crema_http_connections_awaiting_first_request") == 0)
        }
    }

    @Test("an oversized header gets the error document") func anOversizedHeaderGetsTheErrorDocument() async throws {
        try await LiveServer.run(.init()) { server in
            let header = String(repeating: "a", count: 100 * 1024)
            let answer = try await server.sendAndReadUntilClosed("GET /health/live HTTP/1.1\r\nHost: crema\r\nX-Padding: \(header)\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
            #expect(LiveServer.errorCode(answer) == "header_too_large")
            #expect(answer.contains(#""details":{"limit_bytes":81920}"#))
        }
    }

    @Test("garbage gets the error document") func garbageGetsTheErrorDocument() async throws {
        try await LiveServer.run(.init()) { server in
            let answer = try await server.sendAndReadUntilClosed("HELLO\0 there\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(LiveServer.errorCode(answer) == "malformed_request")
        }
    }

    @Test("a TLS hello on the plain port is answered at once not at the read deadline") func aTLSHelloOnThePlainPortIsAnsweredAtOnceNotAtTheReadDeadline() async throws {
        // With a 600 s read timeout only an answer to the first bytes ends this within the suite's time limit.
        try await LiveServer.run(.init(readTimeout: .seconds(600), idleTimeout: .seconds(600))) { server in
            let answer = try await server.sendAndReadUntilClosed("\u{16}\u{3}\u{1}\u{2}\u{0}\u{1}\u{0}")
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(LiveServer.errorCode(answer) == "malformed_request")
        }
    }

    @Test("empty lines before a request and requests sent together are all answered") func emptyLinesBeforeARequestAndRequestsSentTogetherAreAllAnswered() async throws {
        try await LiveServer.run(.init()) { server in
            let answer = try await server.sendAndReadUntilClosed(
                "\r\n\r\n" + LiveServer.healthRequest + "GET /health/live HTTP/1.1\r\nHost: crema\r\nConnection: close\r\n\r\n")
            #expect(answer.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == 2)
            #expect(answer.hasSuffix(#"{"status":"ok"}"#))
        }
    }

    @Test("a port already in use stops the server with an error naming it") func aPortAlreadyInUseStopsTheServerWithAnErrorNamingIt() async throws {
        let taken = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(taken.localAddress?.port)
        try await TestDatabase.with { db in
            let app = CremaApplication.build(try APIHarness.dependencies(pool: db.pool), host: "127.0.0.1", port: port, logger: .init(label: "test"))
            let error = await #expect(throws: HTTPServerError.self) {
                try await ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "test"))).run()
            }
            #expect(error?.code == "cannot_listen")
            #expect(error?.description.hasPrefix("cannot listen on 127.0.0.1:\(port): Address already in use") == true)
        }
        try await taken.close()
    }

    @Test("the limits come from the environment") func theLimitsComeFromTheEnvironment() throws {
        let limits = try ConnectionLimits(environment: [
            "CREMA_HTTP_READ_TIMEOUT": "2.5", "CREMA_HTTP_IDLE_TIMEOUT": "30", "CREMA_HTTP_MAX_CONNECTIONS": "100",
        ])
        #expect(limits == ConnectionLimits(readTimeout: .milliseconds(2500), idleTimeout: .seconds(30), maxConnections: 100))
        #expect(try ConnectionLimits(environment: [:]) == ConnectionLimits())
    }

    @Test("read deadlines are spread below the timeout never above it") func readDeadlinesAreSpreadBelowTheTimeoutNeverAboveIt() {
        let limits = ConnectionLimits(readTimeout: .seconds(10))
        #expect(limits.readDeadline(random: 0) == .seconds(10))
        #expect(limits.readDeadline(random: 0.5) == .milliseconds(9500))
        #expect(limits.readDeadline(random: 0.999_999) > .seconds(9))
        #expect(limits.readDeadline(random: 7) == .seconds(9))
        var still = limits
        still.readTimeoutSpread = 0
        #expect(still.readDeadline(random: 0.5) == .seconds(10))
    }

    @Test("the listen backlog has room for every connection the cap allows") func theListenBacklogHasRoomForEveryConnectionTheCapAllows() {
        #expect(ConnectionLimits().backlog == 4096)
        #expect(ConnectionLimits(maxConnections: 100).backlog == 100)
        #expect(ConnectionLimits(maxConnections: 1_000_000).backlog == 65_535)
    }

    @Test("a bad limit is refused naming the variable", arguments: [
        ("CREMA_HTTP_READ_TIMEOUT", "0"), ("CREMA_HTTP_IDLE_TIMEOUT", "soon"), ("CREMA_HTTP_MAX_CONNECTIONS", "-1"),
    ])
    func aBadLimitIsRefusedNamingTheVariable(_ name: String, _ value: String) {
        let error = #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: [name: value]) }
        #expect(error?.description.contains(name) == true)
    }
}
