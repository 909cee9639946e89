import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import NIOTLS
import Testing

@testable import CremaAPNs

/// The connection handler on NIO's embedded channel, whose clock only moves when told: frames out, frames in,
/// flushes counted, deadlines reached without waiting.
@Suite("The APNs connection handler")
struct APNsConnectionHandlerTests {
    /// Counts the flushes that reach the network side.
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = HTTP2Frame
        var flushes = 0
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    struct Connection {
        let channel: EmbeddedChannel
        let loop: EmbeddedEventLoop
        let handler: APNsConnectionHandler
        let counter: FlushCounter
        let flags: APNsConnectionFlags
        let handshake: EventLoopFuture<Void>

        /// The frames written since the last call.
        func written() throws -> [HTTP2Frame] {
            var frames: [HTTP2Frame] = []
            while let frame = try channel.readOutbound(as: HTTP2Frame.self) { frames.append(frame) }
            return frames
        }

        /// Starts one request per body; returns their outcomes' futures.
        func start(_ bodies: [String], timeout: TimeAmount = .seconds(10)) -> [EventLoopFuture<APNsStreamOutcome>] {
            var futures: [EventLoopFuture<APNsStreamOutcome>] = []
            let batch = bodies.enumerated().map { index, body in
                let promise = loop.makePromise(of: APNsStreamOutcome.self)
                futures.append(promise.futureResult)
                return APNsSubmission(
                    sendID: UInt64(index + 1),
                    request: APNsWireRequest(headers: HPACKHeaders([(":method", "POST"), (":path", "/3/device/\(index)")]), body: ByteBuffer(string: body)),
                    deadline: loop.now + timeout, promise: promise)
            }
            handler.start(batch)
            return futures
        }

        func answer(_ stream: Int, status: Int, body: String? = nil) throws {
            let id = HTTP2StreamID(stream)
            try channel.writeInbound(HTTP2Frame(streamID: id, payload: .headers(.init(headers: HPACKHeaders([(":status", String(status))]), endStream: body == nil))))
            if let body {
                try channel.writeInbound(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true))))
            }
        }
    }

    /// A handler behind a flush counter, its TLS agreed on `protocol` and (unless told otherwise) the server's
    /// SETTINGS read.
    static func connection(alpn: String? = "h2", settings: Bool = true) throws -> Connection {
        let loop = EmbeddedEventLoop()
        let flags = APNsConnectionFlags()
        let handshake = loop.makePromise(of: Void.self)
        let handler = APNsConnectionHandler(flags: flags, handshake: handshake, handshakeDeadline: loop.now + .seconds(5))
        let counter = FlushCounter()
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([counter, handler])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: alpn))
        if settings { try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([])))) }
        return Connection(channel: channel, loop: loop, handler: handler, counter: counter, flags: flags, handshake: handshake.futureResult)
    }

    static func outcome(_ future: EventLoopFuture<APNsStreamOutcome>) -> APNsStreamOutcome? {
        var outcome: APNsStreamOutcome?
        future.assumeIsolated().whenSuccess { outcome = $0 }
        return outcome
    }

    @Test func aBatchOfRequestsIsWrittenAsHeadersAndDataFramesWithOneFlush() throws {
        let c = try Self.connection()
        #expect(Self.outcome(c.handshake.map { APNsStreamOutcome.notSent }) != nil, "ready once TLS said h2 and SETTINGS came")
        let before = c.counter.flushes
        let futures = c.start(["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"])
        #expect(c.counter.flushes == before + 1)
        let frames = try c.written()
        #expect(frames.map(\.streamID) == [1, 1, 3, 3, 5, 5].map { HTTP2StreamID($0) })
        guard case .headers(let head) = frames[0].payload, case .data(let data) = frames[1].payload else {
            Issue.record("expected HEADERS then DATA, got \(frames)")
            return
        }
        #expect(head.headers.first(name: ":path") == "/3/device/0" && !head.endStream)
        #expect(data.endStream && data.data == .byteBuffer(ByteBuffer(string: "{\"a\":1}")))
        try c.answer(3, status: 410, body: #"{"reason":"Unregistered"}"#)
        #expect(Self.outcome(futures[1]) == .answered(APNsWireAnswer(status: 410, headers: HPACKHeaders(), body: ByteBuffer(string: #"{"reason":"Unregistered"}"#))))
        #expect(Self.outcome(futures[0]) == nil && Self.outcome(futures[2]) == nil)
    }

    @Test func theConnectionIsNotReadyUntilTheServersSettingsArrive() throws {
        let c = try Self.connection(settings: false)
        var ready = false
        c.handshake.assumeIsolated().whenSuccess { ready = true }
        #expect(!ready)
        try c.channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: 1)]))))
        #expect(ready)
    }

    @Test func aServerThatDoesNotAgreeOnHTTP2FailsTheHandshakeAndIsClosed() throws {
        let c = try Self.connection(alpn: "http/1.1", settings: false)
        var failure: (any Error)?
        c.handshake.assumeIsolated().whenFailure { failure = $0 }
        #expect(failure as? APNsClientError == .transport("the server does not speak HTTP/2 (ALPN: http/1.1)"))
        #expect(!c.channel.isActive)
    }

    @Test func aHandshakeThatDoesNotFinishByItsDeadlineTimesOut() throws {
        let c = try Self.connection(settings: false)
        var failure: (any Error)?
        c.handshake.assumeIsolated().whenFailure { failure = $0 }
        c.loop.advanceTime(by: .seconds(4))
        #expect(failure == nil)
        c.loop.advanceTime(by: .seconds(1))
        #expect(failure as? APNsClientError == .timeout)
    }

    @Test func aRequestPastItsDeadlineTimesOutAndItsStreamIsReset() throws {
        let c = try Self.connection()
        let futures = c.start(["{}", "{}"], timeout: .seconds(10))
        _ = try c.written()
        try c.answer(1, status: 200)
        c.loop.advanceTime(by: .seconds(10))
        #expect(Self.outcome(futures[0]) == .answered(APNsWireAnswer(status: 200, headers: HPACKHeaders(), body: ByteBuffer())))
        #expect(Self.outcome(futures[1]) == .failed(.timeout))
        let reset = try c.written()
        #expect(reset.count == 1 && reset[0].streamID == 3)
        guard case .rstStream(.cancel) = reset.first?.payload else {
            Issue.record("expected RST_STREAM(CANCEL), got \(reset)")
            return
        }
    }

    @Test func aCancelledRequestEndsCancelledAndLaterAnswersForItAreIgnored() throws {
        let c = try Self.connection()
        let futures = c.start(["{}"])
        _ = try c.written()
        c.handler.abandon(1, because: .cancelled)
        #expect(Self.outcome(futures[0]) == .failed(.cancelled))
        try c.answer(1, status: 200)
        #expect(try c.written().count == 1, "one RST_STREAM")
    }

    @Test func goAwayEndsTheUnprocessedRequestsAsNotSentStopsNewOnesAndClosesAfterTheLastAnswer() throws {
        let c = try Self.connection()
        let futures = c.start(["{}", "{}", "{}"])
        _ = try c.written()
        try c.channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 3, errorCode: .noError, opaqueData: nil)))
        #expect(Self.outcome(futures[2]) == .notSent)
        #expect(!c.flags.acceptsStreams)
        let late = c.start(["{}"])
        #expect(Self.outcome(late[0]) == .notSent, "a request after GOAWAY is handed back unwritten")
        try c.answer(1, status: 200)
        #expect(c.channel.isActive)
        try c.answer(3, status: 200)
        #expect(!c.channel.isActive, "closed once the last stream it kept was answered")
    }

    @Test func aLostConnectionFailsTheRequestsItHadWritten() throws {
        let c = try Self.connection()
        let futures = c.start(["{}"])
        _ = try c.written()
        c.channel.pipeline.fireChannelInactive()
        #expect(Self.outcome(futures[0]) == .failed(.connectionClosed("the connection closed")))
        #expect(!c.flags.acceptsStreams)
    }

    @Test func answersThatFillHalfTheWindowAreAcknowledgedOnTheConnection() throws {
        let c = try Self.connection()
        let count = 40
        let futures = c.start(Array(repeating: "{}", count: count))
        _ = try c.written()
        let body = String(repeating: "x", count: 1000)
        for stream in stride(from: 1, through: 2 * count - 1, by: 2) { try c.answer(stream, status: 400, body: body) }
        #expect(futures.allSatisfy { Self.outcome($0) != nil })
        let updates = try c.written().compactMap { frame -> Int? in
            guard frame.streamID == .rootStream, case .windowUpdate(let increment) = frame.payload else { return nil }
            return increment
        }
        #expect(updates == [33_000], "40,000 bytes read: one update when 32 KiB had arrived")
    }
}
