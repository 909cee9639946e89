@testable import CremaServer
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

    @Test func bytesWithoutAnEmptyLineStayWithTheHandlerAndBuildNothing() throws {
        let connection = try Connection()
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: crema\r\n"))
        #expect(try connection.channel.readInbound(as: ByteBuffer.self) == nil)
        #expect(connection.built.isEmpty)
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 1)
        _ = try? connection.channel.finish()
    }

    @Test(arguments: [
        ["GET /health/live HTTP/1.1\r\nHost: crema\r\n\r\n"],
        ["GET /health/live HTTP/1.1\r\nHost: crema\r\n\r", "\n"],
        ["GET /health/live HTTP/1.1\r\nHost: crema\r", "\n", "\r", "\nbody"],
        ["GET /health/live HTTP/1.1\nHost: crema\n", "\n"],
    ])
    func aHeadIsPassedOnWholeOnceItsEmptyLineArrivesHoweverItWasSplit(_ reads: [String]) throws {
        let connection = try Connection()
        for read in reads { try connection.channel.writeInbound(ByteBuffer(string: read)) }
        #expect(connection.built.count == 1)
        var passedOn = ""
        while let bytes = try connection.channel.readInbound(as: ByteBuffer.self) { passedOn += String(buffer: bytes) }
        #expect(passedOn == reads.joined())
        #expect(throws: (any Error).self) { try connection.channel.pipeline.syncOperations.context(handlerType: AwaitingHeadHandler.self) }
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 0)
        _ = try? connection.channel.finish()
    }

    @Test func aSilentConnectionIsClosedAndCountedAtItsReadDeadlineNotBefore() throws {
        let connection = try Connection()
        // Drawn between 90 % and 100 % of the read timeout.
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(8_999))
        #expect(connection.channel.isActive)
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_001))
        #expect(!connection.channel.isActive)
        #expect(connection.metric(#"crema_http_connections_timed_out_total{phase="request"}"#) == 1)
        #expect(connection.metric("crema_http_connections_awaiting_first_request") == 0)
    }

    @Test func theRequestKeepsTheReadDeadlineDrawnAtTheConnect() throws {
        let connection = try Connection()
        let connected = connection.channel.embeddedEventLoop.now
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: crema\r\n\r\n"))
        let deadline = try #require(connection.built.first)
        #expect(deadline >= connected + .seconds(9) && deadline <= connected + .seconds(10))
        _ = try? connection.channel.finish()
    }

    @Test func theHTTPPipelineClosesATricklingBodyAtTheDeadlineDrawnAtTheConnect() throws {
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

    @Test func aHeaderPastTheDecodersLimitWithoutAnEndIsLeftToTheDecoderToRefuse() throws {
        let connection = try Connection()
        let head = "GET /health/live HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: ProtocolErrorHandler.headerLimit)
        try connection.channel.writeInbound(ByteBuffer(string: head))
        #expect(connection.built.count == 1)
        _ = try? connection.channel.finish()
    }

    @Test func aClientEndingItsSideWithNothingSentIsClosed() throws {
        let connection = try Connection()
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!connection.channel.isActive)
        #expect(connection.built.isEmpty)
    }

    @Test func aClientEndingItsSideAfterHalfAHeadLeavesBothToTheDecoder() throws {
        let events = EventRecorder()
        let connection = try Connection { channel, _, _ in try channel.pipeline.syncOperations.addHandler(events) }
        try connection.channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost"))
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try connection.channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == "GET /health/live HTTP/1.1\r\nHost")
        #expect(events.inputClosed == 1)
        #expect(connection.channel.isActive)  // the decoder answers malformed_request, then the answer's writer closes
        _ = try? connection.channel.finish()
    }

    @Test func shutdownClosesAConnectionStillAwaitingItsHead() throws {
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
        private(set) var built: [NIODeadline] = []

        init(build: @escaping (any Channel, NIODeadline, ConnectionMetrics) throws -> Void = { _, _, _ in }) throws {
            let metrics = ConnectionMetrics(registry: registry)
            let handler = AwaitingHeadHandler(limits: AwaitingHeadHandlerTests.limits, metrics: metrics) { [unowned self] channel, deadline in
                built.append(deadline)
                try build(channel, deadline, metrics)
            }
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        /// A series' value in the registry's text exposition.
        func metric(_ series: String) -> Double? {
            registry.emitToString().split(separator: "\n").lazy
                .compactMap { line in line.hasPrefix(series + " ") ? Double(line.dropFirst(series.count + 1)) : nil }
                .first
        }
    }
}

/// Counts the end-of-input events that reach it.
final class EventRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private(set) var inputClosed = 0

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { inputClosed += 1 }
        context.fireUserInboundEventTriggered(event)
    }
}
