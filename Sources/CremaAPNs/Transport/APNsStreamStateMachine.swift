import NIOCore
import NIOHPACK
import NIOHTTP2

/// The streams of one HTTP/2 connection to APNs: which request each carries, what has come back, and what a
/// GOAWAY, a reset or a close means for each. No I/O: `APNsConnectionHandler` reports frames and events and
/// carries out the answers, so every path (including "never processed, safe to send again") is tested without a
/// server. `Waiter` is whatever stands for the caller (a promise in the handler, a number in tests).
struct APNsStreamStateMachine<Waiter> {
    typealias Outcome = APNsStreamOutcome

    /// A waiter and how its request ended.
    struct Finish {
        var waiter: Waiter
        var outcome: Outcome
    }

    private struct Stream {
        var waiter: Waiter
        var status: Int?
        var headers = HPACKHeaders()
        var body = ByteBuffer()
        /// NIOHTTP2 wrote the request's HEADERS towards TLS: the stream exists for the server. Until then it waits
        /// in NIOHTTP2's buffer of streams over the server's limit, and the server knows nothing of it.
        var opened = false
        /// NIOHTTP2 wrote the request's last frame (END_STREAM) towards TLS: from then on it may reach APNs. Before
        /// that, the frames are still in NIOHTTP2's buffers (over the stream limit or the flow-control window).
        var written = false
    }

    private enum Phase {
        case open
        /// No new streams: the server sent GOAWAY (streams above `lastStreamID` were never processed) or the
        /// stream ids ran out. The connection closes once the last stream has its answer.
        case goingAway
        case closed
    }

    /// The largest answer body read. A push's answer is a few dozen bytes, but `all-channels` lists up to 10,000
    /// channel ids (about 270 KB). Not above the stream window the client announces (``APNsConnector``), so a server
    /// that sends more is reset rather than left waiting for a window update that never comes.
    static var maxBodyBytes: Int { 1 << 20 }

    private var streams: [HTTP2StreamID: Stream] = [:]
    private var phase = Phase.open
    private var nextStreamID: Int32 = 1
    /// The last id a client may use (`Int32.max`); lower in tests, to reach the end of the id space.
    private let lastUsableStreamID: Int32
    init(lastUsableStreamID: Int32 = Int32.max) {
        self.lastUsableStreamID = lastUsableStreamID
    }

    /// Whether new requests may start here.
    var acceptsStreams: Bool {
        if case .open = phase { return true }
        return false
    }

    /// Requests waiting for their answer.
    var openStreams: Int { streams.count }

    /// A new request: the stream to write it on, or nil when this connection takes no new streams (the caller
    /// sends it elsewhere: nothing was written).
    mutating func start(_ waiter: Waiter) -> HTTP2StreamID? {
        guard case .open = phase else { return nil }
        let id = HTTP2StreamID(nextStreamID)
        streams[id] = Stream(waiter: waiter)
        if nextStreamID > lastUsableStreamID - 2 {
            phase = .goingAway
        } else {
            nextStreamID += 2
        }
        return id
    }

    /// NIOHTTP2 wrote the request's HEADERS towards TLS.
    mutating func opened(_ id: HTTP2StreamID) {
        streams[id]?.opened = true
    }

    /// NIOHTTP2 wrote the request's last frame towards TLS: from now on a lost connection may have delivered it.
    mutating func written(_ id: HTTP2StreamID) {
        streams[id]?.opened = true
        streams[id]?.written = true
    }

    /// Writing the request failed. If its last frame never left NIOHTTP2 (dropped from its buffers), the server
    /// cannot have processed it. If it did, it may be on the wire: the close or the stream's end decides.
    mutating func writeFailed(_ id: HTTP2StreamID) -> Finish? {
        guard let stream = streams[id], !stream.written else { return nil }
        streams[id] = nil
        return Finish(waiter: stream.waiter, outcome: .notSent)
    }

    /// A HEADERS frame: the answer's head, or trailers. Ends the request when `endStream` is set.
    mutating func headers(_ id: HTTP2StreamID, _ fields: HPACKHeaders, endStream: Bool) -> Finish? {
        guard var stream = streams[id] else { return nil }
        if stream.status == nil {
            guard let text = fields.first(name: ":status"), let status = Int(text) else {
                streams[id] = nil
                return Finish(waiter: stream.waiter, outcome: .failed(.transport("an answer without a :status")))
            }
            // 1xx heads are informational; the final head follows.
            if (100..<200).contains(status), !endStream { return nil }
            stream.status = status
            for (name, value, _) in fields where !name.hasPrefix(":") { stream.headers.add(name: name, value: value) }
        }
        guard endStream else {
            streams[id] = stream
            return nil
        }
        return finish(id, stream)
    }

    /// A DATA frame. `reset` asks for the stream to be reset (an oversized answer).
    mutating func data(_ id: HTTP2StreamID, _ bytes: ByteBuffer, endStream: Bool) -> (finish: Finish?, reset: Bool) {
        guard var stream = streams[id] else { return (nil, false) }
        guard stream.body.readableBytes + bytes.readableBytes <= Self.maxBodyBytes else {
            streams[id] = nil
            let failure = APNsClientError.transport("an answer body over \(Self.maxBodyBytes) bytes")
            return (Finish(waiter: stream.waiter, outcome: .failed(failure)), true)
        }
        var bytes = bytes
        stream.body.writeBuffer(&bytes)
        guard endStream else {
            streams[id] = stream
            return (nil, false)
        }
        return (finish(id, stream), false)
    }

    /// The connection-level WINDOW_UPDATE to send when NIOHTTP2 reports `inbound` bytes of receive window left:
    /// the whole window back once half is used. Every DATA frame counts, also those NIOHTTP2 drops for streams
    /// already reset, which is why this reads NIOHTTP2's count rather than keeping one.
    static func windowIncrement(inbound: Int, target: Int = 65_535) -> Int? {
        inbound <= target / 2 ? target - inbound : nil
    }

    /// RST_STREAM from the server. REFUSED_STREAM promises the request was not processed (RFC 9113 §8.7).
    mutating func reset(_ id: HTTP2StreamID, _ code: HTTP2ErrorCode) -> Finish? {
        guard let stream = streams.removeValue(forKey: id) else { return nil }
        if code == .refusedStream { return Finish(waiter: stream.waiter, outcome: .notSent) }
        return Finish(waiter: stream.waiter, outcome: .failed(.connectionClosed("the server reset the stream (\(code))")))
    }

    /// The HTTP/2 layer closed a stream that had no complete answer (its own GOAWAY handling, a protocol error).
    mutating func closed(_ id: HTTP2StreamID, reason: HTTP2ErrorCode?) -> Finish? {
        guard let stream = streams.removeValue(forKey: id) else { return nil }
        if reason == .refusedStream || !stream.written { return Finish(waiter: stream.waiter, outcome: .notSent) }
        let why = reason.map { "the stream closed without an answer (\($0))" } ?? "the stream closed without an answer"
        return Finish(waiter: stream.waiter, outcome: .failed(.connectionClosed(why)))
    }

    /// GOAWAY: requests above `lastStreamID`, and those whose stream the server never saw opened (whatever the id:
    /// a graceful GOAWAY names the largest id there is), were never processed and go elsewhere; the rest keep
    /// their streams. `unwritten` are the ones still in NIOHTTP2's buffers, to be reset so that their frames are
    /// dropped (opened after a GOAWAY they would be an error). `close` is true when nothing is left to wait for.
    mutating func goAway(lastStreamID: HTTP2StreamID) -> (finishes: [Finish], unwritten: [HTTP2StreamID], close: Bool) {
        if case .closed = phase { return ([], [], false) }
        phase = .goingAway
        let unprocessed = streams.filter { $0.key > lastStreamID || !$0.value.opened }.keys.sorted()
        var unwritten: [HTTP2StreamID] = []
        let finishes = unprocessed.map { id in
            let stream = streams.removeValue(forKey: id)!
            if !stream.written { unwritten.append(id) }
            return Finish(waiter: stream.waiter, outcome: .notSent)
        }
        return (finishes, unwritten, streams.isEmpty)
    }

    /// No new streams here (after an error on the connection); the open ones keep going.
    mutating func retire() {
        if case .open = phase { phase = .goingAway }
    }

    /// The caller stopped waiting (`timeout`, `cancelled`): the stream should be reset if it was started.
    mutating func abandon(_ id: HTTP2StreamID, because error: APNsClientError) -> Finish? {
        guard let stream = streams.removeValue(forKey: id) else { return nil }
        return Finish(waiter: stream.waiter, outcome: .failed(error))
    }

    /// Whether a connection going away has answered its last stream and can close.
    var drained: Bool {
        if case .goingAway = phase { return streams.isEmpty }
        return false
    }

    /// The connection closed: requests written may have reached APNs; the others were never processed.
    mutating func connectionClosed(_ detail: String) -> [Finish] {
        phase = .closed
        let open = streams.sorted { $0.key < $1.key }
        streams = [:]
        return open.map { _, stream in
            Finish(waiter: stream.waiter, outcome: stream.written ? .failed(.connectionClosed(detail)) : .notSent)
        }
    }

    private mutating func finish(_ id: HTTP2StreamID, _ stream: Stream) -> Finish {
        streams[id] = nil
        let answer = APNsWireAnswer(status: stream.status ?? 0, headers: stream.headers, body: stream.body)
        return Finish(waiter: stream.waiter, outcome: .answered(answer))
    }
}

/// How a request ended on one connection.
enum APNsStreamOutcome: Sendable, Equatable {
    /// APNs answered: status, header fields and body.
    case answered(APNsWireAnswer)
    /// The server never processed it (refused, above a GOAWAY's last stream, or never written): sending it
    /// again, on another connection, cannot duplicate the push.
    case notSent
    /// No answer, and the request may have reached APNs.
    case failed(APNsClientError)
}

/// An APNs answer as it came off the wire.
struct APNsWireAnswer: Sendable, Equatable {
    var status: Int
    var headers: HPACKHeaders
    var body: ByteBuffer
}
