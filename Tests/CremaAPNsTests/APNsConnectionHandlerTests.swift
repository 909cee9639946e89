import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import NIOTLS
import Testing

@testable import CremaAPNs

/// The connection handler behind a real NIOHTTP2 client handler, talking to a NIOHTTP2 server handler over NIO's
/// embedded channels: bytes are carried between the two by hand, so every interleaving (a GOAWAY while streams are
/// held back, DATA for a stream already reset) is set up exactly, and deadlines pass on the embedded clock.
@Suite("The APNs connection handler")
struct APNsConnectionHandlerTests {
    /// Counts the flushes that reach the client's network side.
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = IOData
        var flushes = 0
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    /// The server's end: keeps every frame it reads.
    final class FrameRecorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame
        var frames: [HTTP2Frame] = []
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            frames.append(unwrapInboundIn(data))
        }
    }

    final class Pair {
        let loop = EmbeddedEventLoop()
        let client: EmbeddedChannel
        let server: EmbeddedChannel
        let handler: APNsConnectionHandler
        let counter = FlushCounter()
        let recorder = FrameRecorder()
        let flags = APNsConnectionFlags()
        let handshake: EventLoopFuture<Void>
        private var nextSend: UInt64 = 0

        /// `maxStreams` is what the server allows at once; the client has agreed on `alpn` with it.
        init(maxStreams: Int = 100, alpn: String? = "h2", settings: Bool = true) throws {
            let promise = loop.makePromise(of: Void.self)
            handshake = promise.futureResult
            handler = APNsConnectionHandler(flags: flags, handshake: promise, handshakeDeadline: loop.now + .seconds(5))
            client = EmbeddedChannel(loop: loop)
            server = EmbeddedChannel(loop: loop)
            try client.pipeline.syncOperations.addHandlers([
                counter, NIOHTTP2Handler(mode: .client, frameDelegate: handler, connectionConfiguration: APNsConnector.http2), handler,
            ])
            try server.pipeline.syncOperations.addHandlers([
                NIOHTTP2Handler(mode: .server, initialSettings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxStreams)]),
                recorder,
            ])
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
            try client.connect(to: address).wait()
            try server.connect(to: address).wait()
            client.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: alpn))
            if settings { try carry() }
        }

        /// Carries bytes both ways until neither side has anything to send.
        func carry() throws {
            try carryToServer()
            while try carryToClient() + carryToServer() > 0 {}
        }

        @discardableResult
        func carryToServer() throws -> Int {
            var moved = 0
            while let data = try client.readOutbound(as: IOData.self) {
                guard case .byteBuffer(let bytes) = data else { continue }
                try server.writeInbound(bytes)
                moved += 1
            }
            return moved
        }

        @discardableResult
        func carryToClient() throws -> Int {
            var moved = 0
            while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                if client.isActive { try client.writeInbound(bytes) }
                moved += 1
            }
            return moved
        }

        /// Starts one request per body as one batch; returns their outcomes' futures.
        func start(_ count: Int, timeout: TimeAmount = .seconds(10)) -> [EventLoopFuture<APNsStreamOutcome>] {
            var futures: [EventLoopFuture<APNsStreamOutcome>] = []
            let batch = (0..<count).map { index in
                nextSend += 1
                let promise = loop.makePromise(of: APNsStreamOutcome.self)
                futures.append(promise.futureResult)
                let headers = HPACKHeaders([
                    (":method", "POST"), (":scheme", "https"), (":authority", "apns.test"), (":path", "/3/device/\(index)"),
                ])
                return APNsSubmission(
                    sendID: nextSend, request: APNsWireRequest(headers: headers, body: ByteBuffer(string: #"{"aps":{}}"#)),
                    deadline: loop.now + timeout, promise: promise)
            }
            handler.start(batch)
            return futures
        }

        /// The server writes `frame` (not yet carried to the client).
        func serverWrites(_ stream: Int, _ payload: HTTP2Frame.FramePayload) {
            server.writeAndFlush(HTTP2Frame(streamID: HTTP2StreamID(stream), payload: payload), promise: nil)
        }

        /// The server answers `stream` with `status` and, when given, a body.
        func answer(_ stream: Int, status: Int, body: String? = nil) {
            serverWrites(stream, .headers(.init(headers: HPACKHeaders([(":status", String(status))]), endStream: body == nil)))
            if let body { serverWrites(stream, .data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true))) }
        }

        /// Requests the server has read in full, by stream id.
        var requestsReceived: [Int] {
            recorder.frames.compactMap { frame in
                guard case .data(let data) = frame.payload, data.endStream else { return nil }
                return Int(frame.streamID)
            }
        }

        /// Frames of `kind` the server read, as (stream, payload).
        func received(where matches: (HTTP2Frame.FramePayload) -> Bool) -> [HTTP2Frame] {
            recorder.frames.filter { matches($0.payload) }
        }
    }

    static func outcome(_ future: EventLoopFuture<APNsStreamOutcome>) -> APNsStreamOutcome? {
        var outcome: APNsStreamOutcome?
        future.assumeIsolated().whenSuccess { outcome = $0 }
        return outcome
    }

    static func ok(_ status: Int, _ body: String = "") -> APNsStreamOutcome {
        .answered(APNsWireAnswer(status: status, headers: HPACKHeaders(), body: ByteBuffer(string: body)))
    }

    @Test("a batch of requests goes out with one flush and each answer finds its request") func aBatchOfRequestsGoesOutWithOneFlushAndEachAnswerFindsItsRequest() throws {
        let pair = try Pair()
        #expect(Self.outcome(pair.handshake.map { Self.ok(0) }) != nil, "ready once TLS said h2 and SETTINGS came")
        let before = pair.counter.flushes
        let futures = pair.start(3)
        #expect(pair.counter.flushes == before + 1)
        try pair.carry()
        #expect(pair.requestsReceived.sorted() == [1, 3, 5])
        pair.answer(3, status: 410, body: #"{"reason":"Unregistered"}"#)
        pair.answer(1, status: 200)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == Self.ok(200))
        #expect(Self.outcome(futures[1]) == Self.ok(410, #"{"reason":"Unregistered"}"#))
        #expect(Self.outcome(futures[2]) == nil)
    }

    @Test("the connection is not ready until the servers settings arrive") func theConnectionIsNotReadyUntilTheServersSettingsArrive() throws {
        let pair = try Pair(settings: false)
        #expect(Self.outcome(pair.handshake.map { Self.ok(0) }) == nil)
        try pair.carry()
        #expect(Self.outcome(pair.handshake.map { Self.ok(0) }) != nil)
    }

    @Test("a server that does not agree on HTTP 2 fails the handshake and is closed") func aServerThatDoesNotAgreeOnHTTP2FailsTheHandshakeAndIsClosed() throws {
        let pair = try Pair(alpn: "http/1.1", settings: false)
        var failure: (any Error)?
        pair.handshake.assumeIsolated().whenFailure { failure = $0 }
        #expect(failure as? APNsClientError == .transport("the server does not speak HTTP/2 (ALPN: http/1.1)"))
        #expect(!pair.client.isActive)
    }

    @Test("a handshake that does not finish by its deadline times out") func aHandshakeThatDoesNotFinishByItsDeadlineTimesOut() throws {
        let pair = try Pair(settings: false)
        var failure: (any Error)?
        pair.handshake.assumeIsolated().whenFailure { failure = $0 }
        pair.loop.advanceTime(by: .seconds(4))
        #expect(failure == nil)
        pair.loop.advanceTime(by: .seconds(1))
        #expect(failure as? APNsClientError == .timeout)
    }

    @Test("go away while streams are held back hands them back unsent and keeps the connection for the last answer") func goAwayWhileStreamsAreHeldBackHandsThemBackUnsentAndKeepsTheConnectionForTheLastAnswer() throws {
        // One stream at a time, as APNs allows on a new connection until a valid token was posted.
        let pair = try Pair(maxStreams: 1)
        let futures = pair.start(3)
        try pair.carry()
        #expect(pair.requestsReceived == [1], "streams 3 and 5 wait in NIOHTTP2's buffer")
        pair.serverWrites(0, .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil))
        try pair.carry()
        #expect(Self.outcome(futures[1]) == .notSent && Self.outcome(futures[2]) == .notSent)
        #expect(!pair.flags.acceptsStreams)
        #expect(pair.client.isActive, "stream 1 still waits for its answer")
        pair.answer(1, status: 200)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == Self.ok(200))
        #expect(pair.requestsReceived == [1], "the held-back streams were dropped, never sent after the GOAWAY")
        #expect(pair.received { if case .headers = $0 { true } else { false } }.map(\.streamID) == [1])
        #expect(pair.received { if case .goAway = $0 { true } else { false } }.isEmpty, "no connection error from the client")
        #expect(!pair.client.isActive, "closed once its last answer came")
    }

    @Test("a graceful go away naming every stream still hands back the held back ones") func aGracefulGoAwayNamingEveryStreamStillHandsBackTheHeldBackOnes() throws {
        let pair = try Pair(maxStreams: 1)
        let futures = pair.start(2)
        try pair.carry()
        // A server shutting down gracefully names the largest id there is: stream 3 is below it, but the server
        // never saw it opened.
        pair.serverWrites(0, .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
        try pair.carry()
        #expect(Self.outcome(futures[1]) == .notSent)
        pair.answer(1, status: 200)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == Self.ok(200))
        #expect(pair.received { if case .headers = $0 { true } else { false } }.map(\.streamID) == [1])
        #expect(pair.received { if case .goAway = $0 { true } else { false } }.isEmpty)
        #expect(!pair.client.isActive)
    }

    @Test("an error on the connection stops new requests and closes it once the open ones end") func anErrorOnTheConnectionStopsNewRequestsAndClosesItOnceTheOpenOnesEnd() throws {
        struct Broken: Error {}
        let pair = try Pair()
        let futures = pair.start(1)
        try pair.carry()
        pair.client.pipeline.fireErrorCaught(Broken())
        #expect(!pair.flags.acceptsStreams)
        #expect(pair.client.isActive, "the request on it still gets its answer")
        pair.answer(1, status: 200)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == Self.ok(200))
        #expect(!pair.client.isActive)
        let idle = try Pair()
        idle.client.pipeline.fireErrorCaught(Broken())
        #expect(!idle.client.isActive, "nothing open: closed at once")
    }

    @Test("a request whose deadline passed while waiting for the connection is not sent") func aRequestWhoseDeadlinePassedWhileWaitingForTheConnectionIsNotSent() throws {
        let pair = try Pair()
        let late = pair.start(1, timeout: .zero)
        try pair.carry()
        #expect(Self.outcome(late[0]) == .failed(.timeout))
        #expect(pair.received { if case .headers = $0 { true } else { false } }.isEmpty)
    }

    @Test("a refused stream comes back not sent and the others are answered") func aRefusedStreamComesBackNotSentAndTheOthersAreAnswered() throws {
        let pair = try Pair()
        let futures = pair.start(2)
        try pair.carry()
        pair.serverWrites(1, .rstStream(.refusedStream))
        pair.answer(3, status: 200)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == .notSent)
        #expect(Self.outcome(futures[1]) == Self.ok(200))
        #expect(pair.flags.acceptsStreams)
    }

    @Test("a close fails the requests that went out and hands back the held back ones unsent") func aCloseFailsTheRequestsThatWentOutAndHandsBackTheHeldBackOnesUnsent() throws {
        let pair = try Pair(maxStreams: 1)
        let futures = pair.start(2)
        try pair.carry()
        try pair.client.close().wait()
        #expect(Self.outcome(futures[0]) == .failed(.connectionClosed("the connection closed")))
        #expect(Self.outcome(futures[1]) == .notSent)
        #expect(!pair.flags.acceptsStreams)
    }

    @Test("a request past its deadline times out and its stream is reset") func aRequestPastItsDeadlineTimesOutAndItsStreamIsReset() throws {
        let pair = try Pair()
        let futures = pair.start(2, timeout: .seconds(10))
        try pair.carry()
        pair.answer(1, status: 200)
        try pair.carry()
        pair.loop.advanceTime(by: .seconds(10))
        try pair.carry()
        #expect(Self.outcome(futures[0]) == Self.ok(200))
        #expect(Self.outcome(futures[1]) == .failed(.timeout))
        let resets = pair.received { if case .rstStream(.cancel) = $0 { true } else { false } }
        #expect(resets.map(\.streamID) == [3])
    }

    @Test("a cancelled request ends cancelled and its stream is reset") func aCancelledRequestEndsCancelledAndItsStreamIsReset() throws {
        let pair = try Pair()
        let futures = pair.start(2)
        try pair.carry()
        pair.handler.abandon(1, because: .cancelled)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == .failed(.cancelled))
        #expect(Self.outcome(futures[1]) == nil)
        let resets = pair.received { if case .rstStream(.cancel) = $0 { true } else { false } }
        #expect(resets.map(\.streamID) == [1])
    }

    @Test("answers for streams already reset still give their bytes back to the connection window") func answersForStreamsAlreadyResetStillGiveTheirBytesBackToTheConnectionWindow() throws {
        let pair = try Pair()
        // 70,000 bytes: more than the connection's 65,535-byte window, so the server cannot send them all, nor
        // anything after them, unless the client gives window back.
        let count = 70
        let futures = pair.start(count, timeout: .seconds(1))
        try pair.carry()
        // The server answers every stream with a 1,000-byte body, but the bytes are still on their way when every
        // request's deadline passes and the client resets its streams.
        let body = String(repeating: "x", count: 1000)
        for stream in stride(from: 1, through: 2 * count - 1, by: 2) { pair.answer(stream, status: 400, body: body) }
        pair.loop.advanceTime(by: .seconds(1))
        #expect(futures.allSatisfy { Self.outcome($0) == .failed(.timeout) })
        try pair.carryToClient()
        try pair.carry()
        let updates = pair.received { if case .windowUpdate = $0 { true } else { false } }.filter { $0.streamID == .rootStream }
        #expect(!updates.isEmpty, "NIOHTTP2 dropped every byte (streams reset); the window must still be given back")
        let more = pair.start(1)
        try pair.carry()
        pair.answer(2 * count + 1, status: 400, body: body)
        try pair.carry()
        #expect(Self.outcome(more[0]) == Self.ok(400, body))
    }

    @Test("a connection quiet for an hour is pinged and closed when the ping goes unanswered") func aConnectionQuietForAnHourIsPingedAndClosedWhenThePingGoesUnanswered() throws {
        let pair = try Pair()
        func pings() -> Int { pair.received { if case .ping(_, ack: false) = $0 { true } else { false } }.count }
        // Traffic at 30 minutes moves the quiet hour on.
        pair.loop.advanceTime(by: .minutes(30))
        let futures = pair.start(1)
        try pair.carry()
        pair.answer(1, status: 200)
        try pair.carry()
        #expect(Self.outcome(futures[0]) == Self.ok(200))
        pair.loop.advanceTime(by: .minutes(59))
        try pair.carry()
        #expect(pings() == 0)
        pair.loop.advanceTime(by: .minutes(1))
        try pair.carry()
        #expect(pings() == 1, "an hour after the last frame")
        // The server's NIOHTTP2 answered it (carried back above): the connection stays.
        pair.loop.advanceTime(by: .seconds(10))
        #expect(pair.client.isActive && pair.flags.acceptsStreams)
        // An hour after that answer (which came at 90 minutes) the next PING's answer never comes back.
        pair.loop.advanceTime(by: .minutes(59) + .seconds(50))
        try pair.carryToServer()
        #expect(pings() == 2)
        pair.loop.advanceTime(by: .seconds(9))
        #expect(pair.client.isActive)
        pair.loop.advanceTime(by: .seconds(1))
        #expect(!pair.client.isActive && !pair.flags.acceptsStreams, "closed: the next send opens a new connection")
    }
}
