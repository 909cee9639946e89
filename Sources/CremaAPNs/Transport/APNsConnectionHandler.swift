import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOTLS

/// The last handler of an APNs connection, behind TLS and NIOHTTP2's frame layer: writes a batch of requests as
/// HTTP/2 frames with one flush (one TLS record, one `write`), matches the frames that come back to their
/// requests, and keeps each request's deadline. Also NIOHTTP2's frame delegate, which says when a request's last
/// frame left NIOHTTP2's buffers. Runs on the connection's event loop only; the bookkeeping is
/// `APNsStreamStateMachine`'s.
final class APNsConnectionHandler: ChannelDuplexHandler, NIOHTTP2FrameDelegate {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Never
    typealias OutboundOut = HTTP2Frame

    struct Waiter {
        var sendID: UInt64
        var promise: EventLoopPromise<APNsStreamOutcome>
    }

    private var machine = APNsStreamStateMachine<Waiter>()
    /// Each started request's stream and deadline timer, by send.
    private var started: [UInt64: (stream: HTTP2StreamID, timeout: Scheduled<Void>)] = [:]
    private var context: ChannelHandlerContext?
    private let flags: APNsConnectionFlags
    /// Completed when TLS has agreed on HTTP/2 and the server's first SETTINGS have arrived, failed if that does
    /// not happen by `handshakeDeadline`. Waiting for SETTINGS matters: APNs allows one stream on a new connection
    /// until a request with a valid token has been posted, and says so there; NIOHTTP2 then holds back the
    /// streams over the limit instead of the server refusing them.
    private var handshake: EventLoopPromise<Void>?
    private var agreedOnHTTP2 = false
    private let handshakeDeadline: NIODeadline
    private var handshakeTimer: Scheduled<Void>?
    /// Resets written while reading wait for the end of the read to be flushed.
    private var flushAfterRead = false
    /// Why the connection is closing, for the requests it takes down.
    private var closeReason: String?
    /// Apple: keep a connection for hours or days, and PING it after about an hour without traffic. A PING not
    /// answered within `pingTimeout` means the connection is gone without a close (a NAT that forgot it, a peer
    /// that vanished): it is closed, so the next send opens a new one instead of timing out on it.
    private let idleBeforePing: TimeAmount
    private let pingTimeout: TimeAmount
    private var lastFrameAt: NIODeadline
    private var idleTimer: Scheduled<Void>?
    private var pingOutstanding = false

    init(
        flags: APNsConnectionFlags, handshake: EventLoopPromise<Void>, handshakeDeadline: NIODeadline,
        idleBeforePing: TimeAmount = .hours(1), pingTimeout: TimeAmount = .seconds(10)
    ) {
        self.flags = flags
        self.handshake = handshake
        self.handshakeDeadline = handshakeDeadline
        self.idleBeforePing = idleBeforePing
        self.pingTimeout = pingTimeout
        self.lastFrameAt = .now()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: handshakeDeadline) { [self] in
            failHandshake(.timeout)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        failHandshake(.connectionClosed("the connection closed during the TLS handshake"))
    }

    // MARK: Requests

    /// Starts every request of `batch` and flushes once. A request this connection can no longer take comes back
    /// `notSent` at once.
    func start(_ batch: [APNsSubmission]) {
        guard let context else {
            for submission in batch { submission.promise.succeed(.notSent) }
            return
        }
        let loop = context.eventLoop.assumeIsolated()
        let now = context.eventLoop.now
        for submission in batch {
            // Waiting for a connection can outlast a request's deadline: one already late is not sent at all.
            guard submission.deadline > now else {
                submission.promise.succeed(.failed(.timeout))
                continue
            }
            guard let id = machine.start(Waiter(sendID: submission.sendID, promise: submission.promise)) else {
                submission.promise.succeed(.notSent)
                continue
            }
            let sendID = submission.sendID
            let timeout = loop.scheduleTask(deadline: submission.deadline) { [self] in abandon(sendID, because: .timeout) }
            started[sendID] = (id, timeout)
            let body = submission.request.body
            // Only a failure matters here: whether the request may have left is `wroteFrame`'s to say. A write that
            // succeeded or failed inside TLS's buffer proves nothing either way.
            let end = context.eventLoop.makePromise(of: Void.self)
            end.futureResult.assumeIsolated().whenFailure { [self] _ in finish(machine.writeFailed(id)) }
            let head = HTTP2Frame.FramePayload.Headers(headers: submission.request.headers, endStream: body.readableBytes == 0)
            if body.readableBytes == 0 {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(head))), promise: end)
            } else {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(head))), promise: nil)
                let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(body), endStream: true)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(data))), promise: end)
            }
        }
        flags.setAcceptsStreams(machine.acceptsStreams)
        context.flush()
    }

    /// The caller gave up on a request (its deadline passed, its task was cancelled): it fails with `error`, and
    /// its stream, if still open, is reset so the server stops working on it.
    func abandon(_ sendID: UInt64, because error: APNsClientError) {
        guard let (stream, timeout) = started.removeValue(forKey: sendID) else { return }
        timeout.cancel()
        guard let finish = machine.abandon(stream, because: error) else { return }
        finish.waiter.promise.succeed(finish.outcome)
        if let context {
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.cancel))), promise: nil)
        }
        closeIfDrained()
    }

    /// NIOHTTP2 encoded `frame` and handed it to TLS: a request whose END_STREAM went out may reach APNs.
    func wroteFrame(_ frame: HTTP2Frame) {
        switch frame.payload {
        case .headers(let headers): headers.endStream ? machine.written(frame.streamID) : machine.opened(frame.streamID)
        case .data(let data) where data.endStream: machine.written(frame.streamID)
        default: break
        }
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastFrameAt = context.eventLoop.now
        switch frame.payload {
        case .ping(_, ack: true):
            pingOutstanding = false
        case .headers(let headers):
            finish(machine.headers(frame.streamID, headers.headers, endStream: headers.endStream))
        case .data(let payload):
            guard case .byteBuffer(let bytes) = payload.data else { return }
            let result = machine.data(frame.streamID, bytes, endStream: payload.endStream)
            finish(result.finish)
            if result.reset {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.cancel))), promise: nil)
                flushAfterRead = true
            }
        case .rstStream(let code):
            finish(machine.reset(frame.streamID, code))
        case .settings(.settings):
            if agreedOnHTTP2, let handshake {
                self.handshake = nil
                handshakeTimer?.cancel()
                handshake.succeed()
                lastFrameAt = context.eventLoop.now
                scheduleIdleCheck(at: lastFrameAt + idleBeforePing)
            }
        case .goAway(let lastStreamID, let code, _):
            closeReason = "the server sent GOAWAY (\(code))"
            let (finishes, unwritten, _) = machine.goAway(lastStreamID: lastStreamID)
            flags.setAcceptsStreams(false)
            for finish in finishes { self.finish(finish) }
            for id in unwritten {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
                flushAfterRead = true
            }
        default:
            break
        }
        closeIfDrained()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if flushAfterRead {
            flushAfterRead = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            finish(machine.closed(closed.streamID, reason: closed.reason))
        } else if let window = event as? NIOHTTP2WindowUpdatedEvent, window.streamID == .rootStream,
            let inbound = window.inboundWindowSize, let increment = APNsStreamStateMachine<Waiter>.windowIncrement(inbound: inbound)
        {
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
        } else if case .handshakeCompleted(let negotiated) = event as? TLSUserEvent {
            if negotiated == "h2" {
                agreedOnHTTP2 = true
            } else {
                failHandshake(.transport("the server does not speak HTTP/2 (ALPN: \(negotiated ?? "none"))"))
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if closeReason == nil { closeReason = "\(APNsClient.classify(error))" }
        if handshake != nil {
            failHandshake(APNsClient.classify(error))
            return
        }
        // NIOHTTP2 reports a stream's error (it resets that stream, whose close ends its request) the same way as
        // the connection's (it sends GOAWAY, and the server closes). Either way the connection takes nothing new;
        // the requests on it keep their streams until answered, closed or past their deadline.
        machine.retire()
        flags.setAcceptsStreams(false)
        closeIfDrained()
    }

    func channelInactive(context: ChannelHandlerContext) {
        flags.setAcceptsStreams(false)
        handshakeTimer?.cancel()
        idleTimer?.cancel()
        handshake?.fail(APNsClientError.connectionClosed(closeReason ?? "the connection closed during the TLS handshake"))
        handshake = nil
        for (_, timer) in started.values { timer.cancel() }
        started = [:]
        for finish in machine.connectionClosed(closeReason ?? "the connection closed") {
            finish.waiter.promise.succeed(finish.outcome)
        }
        context.fireChannelInactive()
    }

    // MARK: Helpers

    /// At `deadline`: PING a connection that has been quiet for `idleBeforePing`, or look again when it will have
    /// been; close one whose PING went unanswered.
    private func scheduleIdleCheck(at deadline: NIODeadline) {
        guard let loop = context?.eventLoop else { return }
        idleTimer = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard let context = self.context else { return }
            if pingOutstanding {
                closeReason = "no answer to PING within \(pingTimeout.nanoseconds / 1_000_000_000) s"
                flags.setAcceptsStreams(false)
                context.close(promise: nil)
                return
            }
            let quietUntil = lastFrameAt + idleBeforePing
            guard context.eventLoop.now >= quietUntil else { return scheduleIdleCheck(at: quietUntil) }
            pingOutstanding = true
            let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0), ack: false))
            context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
            scheduleIdleCheck(at: context.eventLoop.now + pingTimeout)
        }
    }

    private func finish(_ finish: APNsStreamStateMachine<Waiter>.Finish?) {
        guard let finish else { return }
        started.removeValue(forKey: finish.waiter.sendID)?.timeout.cancel()
        finish.waiter.promise.succeed(finish.outcome)
        closeIfDrained()
    }

    /// A connection that takes no new streams closes once its last answer is in.
    private func closeIfDrained() {
        guard machine.drained, let context else { return }
        context.close(promise: nil)
    }

    private func failHandshake(_ error: APNsClientError) {
        guard let handshake else { return }
        self.handshake = nil
        handshakeTimer?.cancel()
        handshake.fail(error)
        context?.close(promise: nil)
    }
}

/// One request handed to a connection: its frames, its deadline, and where its outcome goes.
struct APNsSubmission: Sendable {
    var sendID: UInt64
    var request: APNsWireRequest
    var deadline: NIODeadline
    var promise: EventLoopPromise<APNsStreamOutcome>
}

/// A request as it goes on the wire: the whole header block (pseudo-header fields first) and the body.
struct APNsWireRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer
}
