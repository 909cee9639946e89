@testable import CremaServer
import CremaSettings
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Prometheus
import Testing

/// The one handler a connection has until its first request head is whole, on NIO's embedded channel, whose
/// clock moves only when a test moves it: what it keeps, when it builds the HTTP pipeline, and when it closes.
@Suite struct AwaitingHeadHandlerTests {
    static let limits = ConnectionLimits(readTimeout: .seconds(10), idleTimeout: .seconds(60))

    @Test("bytes without an empty line stay with the handler and build nothing") func bytesWithoutAnEmptyLineStayWithTheHandlerAndBuildNothing() throws {
        let connection = try Connection()
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: crema\r\n"))
        #expect(try connection.channel.readInbound(as: ByteBuffer.self) == nil)
        #expect(connection.built.isEmpty)
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 1)
        _ = try? connection.channel.finish()
    }

    @Test("a head is passed on in one read once its empty line arrives however it was split", arguments: [
        ["GET /health/live HTTP/1.1\r\nHost: crema\r\n\r\n"],
        ["GET /health/live HTTP/1.1\r\nHost: crema\r\n\r", "\n"],
        ["GET /health/live HTTP/1.1\r\nHost: crema\r", "\n", "\r", "\nbody"],
        ["\r\n\r\nGET /health/live HTTP/1.1\r\n", "Host: crema\r\n\r\n"],
    ])
    func aHeadIsPassedOnInOneReadOnceItsEmptyLineArrivesHoweverItWasSplit(_ reads: [String]) throws {
        let connection = try Connection()
        for read in reads { try connection.channel.writeInbound(ByteBuffer(string: read)) }
        #expect(connection.built.count == 1)
        #expect(try connection.channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == reads.joined())
        #expect(try connection.channel.readInbound(as: ByteBuffer.self) == nil)
        #expect(throws: (any Error).self) { try connection.channel.pipeline.syncOperations.context(handlerType: AwaitingHeadHandler.self) }
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 0)
        _ = try? connection.channel.finish()
    }

    @Test("empty lines before the request line do not end the wait") func emptyLinesBeforeTheRequestLineDoNotEndTheWait() throws {
        // The decoder skips them, so a client that sends only these has sent no head.
        let connection = try Connection()
        try connection.channel.writeInbound(ByteBuffer(string: "\r\n\r\n\n\n"))
        #expect(connection.built.isEmpty)
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 1)
        _ = try? connection.channel.finish()
    }

    @Test("what the decoder refuses is handed to it at once and answered", arguments: [
        ("\u{16}\u{3}\u{1}\u{0}\u{A5}", "malformed_request"),  // a TLS hello on the plain port
        ("GET /health/live HTTP/1.1\r\nHost: cr\u{0}ema", "malformed_request"),
        ("GET /health/live HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: ProtocolErrorHandler.headerLimit), "header_too_large"),
    ])
    func whatTheDecoderRefusesIsHandedToItAtOnceAndAnswered(_ bytes: String, _ code: String) throws {
        let answers = RawResponseRecorder()
        let connection = try Connection { channel, _, _ in
            try channel.pipeline.syncOperations.addHandlers([
                answers, ByteToMessageHandler(HTTPRequestDecoder()), HTTP1ToHTTPServerCodec(secure: false),
                ProtocolErrorHandler(routes: RouteTable()),
            ])
        }
        _ = try? connection.channel.writeInbound(ByteBuffer(string: bytes))
        #expect(answers.codes == [code])
        _ = try? connection.channel.finish()
    }

    @Test("a silent connection is closed and counted at its read deadline not before") func aSilentConnectionIsClosedAndCountedAtItsReadDeadlineNotBefore() throws {
        let connection = try Connection()
        // Drawn between 90 % and 100 % of the read timeout.
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(8_999))
        #expect(connection.channel.isActive)
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_001))
        #expect(!connection.channel.isActive)
        #expect(connection.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 1)
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 0)
    }

    @Test("the request keeps the read deadline drawn at the connect") func theRequestKeepsTheReadDeadlineDrawnAtTheConnect() throws {
        let connection = try Connection()
        let connected = connection.channel.embeddedEventLoop.now
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: crema\r\n\r\n"))
        let deadline = try #require(connection.built.first ?? nil)
        #expect(deadline >= connected + .seconds(9) && deadline <= connected + .seconds(10))
        _ = try? connection.channel.finish()
    }

    @Test("the HTTP pipeline closes a trickling body at the deadline drawn at the connect") func theHTTPPipelineClosesATricklingBodyAtTheDeadlineDrawnAtTheConnect() throws {
        let connection = try Connection { channel, deadline, metrics in
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(HTTPRequestDecoder()), HTTP1ToHTTPServerCodec(secure: false),
                ConnectionDeadlineHandler(limits: Self.limits, metrics: metrics, readingUntil: deadline),
            ])
        }
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try connection.channel.writeInbound(ByteBuffer(string: "POST /v1/orders HTTP/1.1\r\nHost: crema\r\nContent-Length: 5\r\n\r\nab"))
        // A deadline drawn afresh at the head would fall at 14 s or later.
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(!connection.channel.isActive)
        #expect(connection.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 1)
    }

    @Test("a client ending its side with nothing sent is closed") func aClientEndingItsSideWithNothingSentIsClosed() throws {
        let connection = try Connection()
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!connection.channel.isActive)
        #expect(connection.built.isEmpty)
    }

    @Test("a client ending its side after half a head leaves both to the decoder") func aClientEndingItsSideAfterHalfAHeadLeavesBothToTheDecoder() throws {
        let events = EventRecorder()
        let connection = try Connection { channel, _, _ in try channel.pipeline.syncOperations.addHandler(events) }
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost"))
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(events.seen == ["read GET /health/live HTTP/1.1\r\nHost", "inputClosed"])
        #expect(connection.channel.isActive)  // left to the HTTP pipeline: its decoder answers the half head
        _ = try? connection.channel.finish()
    }

    @Test("shutdown closes a connection still awaiting its head") func shutdownClosesAConnectionStillAwaitingItsHead() throws {
        let connection = try Connection()
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\n"))
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!connection.channel.isActive)
    }

    /// An embedded connection with the handler under test, whose pipeline building records the read deadline
    /// it was given and adds what `build` adds (nothing by default, so passed-on bytes reach `readInbound`).
    final class Connection {
        let channel = EmbeddedChannel()
        let registry = PrometheusCollectorRegistry()
        private(set) var built: [NIODeadline?] = []

        init(build: @escaping (any Channel, NIODeadline?, ConnectionMetrics) throws -> Void = { _, _, _ in }) throws {
            let metrics = ConnectionMetrics(registry: registry)
            let handler = AwaitingHeadHandler(limits: AwaitingHeadHandlerTests.limits, metrics: metrics) { [unowned self] channel, deadline in
                built.append(deadline)
                try build(channel, deadline, metrics)
            }
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        func metric(_ series: String) -> Double { registry.value(of: series) }
    }
}

/// Keeps, in order, the reads and end-of-input events that reach it.
final class EventRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private(set) var seen: [String] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        seen.append("read " + String(buffer: unwrapInboundIn(data)))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { seen.append("inputClosed") }
        context.fireUserInboundEventTriggered(event)
    }
}
