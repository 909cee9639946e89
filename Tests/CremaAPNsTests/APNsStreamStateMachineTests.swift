import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import CremaAPNs

/// The stream bookkeeping of one APNs connection, without a connection: waiters are numbers.
@Suite("The streams of one APNs connection")
struct APNsStreamStateMachineTests {
    typealias Machine = APNsStreamStateMachine<Int>

    static func head(_ status: Int, _ fields: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders([(":status", String(status))] + fields)
    }

    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// Starts `count` requests (waiters 1...count), each marked written.
    static func started(_ machine: inout Machine, _ count: Int) -> [HTTP2StreamID] {
        (1...count).map { waiter in
            let id = machine.start(waiter)!
            machine.written(id)
            return id
        }
    }

    @Test("requests get odd rising stream IDs and an answer ends with its status fields and body") func requestsGetOddRisingStreamIDsAndAnAnswerEndsWithItsStatusFieldsAndBody() throws {
        var machine = Machine()
        let ids = Self.started(&machine, 3)
        #expect(ids == [1, 3, 5].map { HTTP2StreamID($0) })
        #expect(machine.headers(ids[1], Self.head(400, [("apns-id", "abc")]), endStream: false) == nil)
        #expect(machine.data(ids[1], Self.bytes(#"{"reason":"#), endStream: false).finish == nil)
        let finish = try #require(machine.data(ids[1], Self.bytes(#""BadDeviceToken"}"#), endStream: true).finish)
        #expect(finish.waiter == 2)
        #expect(finish.outcome == .answered(APNsWireAnswer(
            status: 400, headers: HPACKHeaders([("apns-id", "abc")]), body: Self.bytes(#"{"reason":"BadDeviceToken"}"#))))
        #expect(machine.openStreams == 2)
    }

    @Test("a head with end stream is a whole answer and an informational head is skipped") func aHeadWithEndStreamIsAWholeAnswerAndAnInformationalHeadIsSkipped() {
        var machine = Machine()
        let ids = Self.started(&machine, 1)
        #expect(machine.headers(ids[0], Self.head(100), endStream: false) == nil)
        let finish = machine.headers(ids[0], Self.head(200, [("apns-id", "x")]), endStream: true)
        #expect(finish?.outcome == .answered(APNsWireAnswer(status: 200, headers: HPACKHeaders([("apns-id", "x")]), body: ByteBuffer())))
        #expect(machine.openStreams == 0)
    }

    @Test("an answer without a status fails its request") func anAnswerWithoutAStatusFailsItsRequest() {
        var machine = Machine()
        let ids = Self.started(&machine, 1)
        let finish = machine.headers(ids[0], HPACKHeaders([("apns-id", "x")]), endStream: true)
        #expect(finish?.outcome == .failed(.transport("an answer without a :status")))
    }

    @Test("go away sends the unprocessed streams elsewhere keeps the rest and closes after the last answer") func goAwaySendsTheUnprocessedStreamsElsewhereKeepsTheRestAndClosesAfterTheLastAnswer() {
        var machine = Machine()
        let ids = Self.started(&machine, 4)
        let (finishes, unwritten, close) = machine.goAway(lastStreamID: ids[1])
        #expect(finishes.map(\.waiter) == [3, 4])
        #expect(unwritten.isEmpty, "both had gone out: nothing left in NIOHTTP2's buffers to drop")
        #expect(finishes.allSatisfy { $0.outcome == .notSent })
        #expect(!close)
        #expect(!machine.acceptsStreams)
        #expect(machine.start(9) == nil, "no new stream after GOAWAY")
        #expect(!machine.drained)
        _ = machine.headers(ids[0], Self.head(200), endStream: true)
        #expect(!machine.drained)
        #expect(machine.headers(ids[1], Self.head(200), endStream: true)?.waiter == 2)
        #expect(machine.drained)
    }

    @Test("a go away above every stream closes at once when nothing is open") func aGoAwayAboveEveryStreamClosesAtOnceWhenNothingIsOpen() {
        var machine = Machine()
        let (finishes, unwritten, close) = machine.goAway(lastStreamID: .maxID)
        #expect(finishes.isEmpty && unwritten.isEmpty && close && machine.drained)
    }

    @Test("go away names the unprocessed streams still held back so their frames can be dropped") func goAwayNamesTheUnprocessedStreamsStillHeldBackSoTheirFramesCanBeDropped() {
        var machine = Machine()
        let out = machine.start(1)!
        machine.written(out)
        let opened = machine.start(2)!
        machine.opened(opened)
        let heldBack = [machine.start(3)!, machine.start(4)!]
        // The largest id there is: only the streams the server never saw opened are unprocessed.
        let (finishes, unwritten, close) = machine.goAway(lastStreamID: .maxID)
        #expect(finishes.map(\.waiter) == [3, 4] && finishes.allSatisfy { $0.outcome == .notSent })
        #expect(unwritten == heldBack)
        #expect(!close, "streams 1 and 2 still wait for their answers")
        #expect(machine.openStreams == 2)
    }

    @Test("a refused stream was not processed and any other reset may have been") func aRefusedStreamWasNotProcessedAndAnyOtherResetMayHaveBeen() {
        var machine = Machine()
        let ids = Self.started(&machine, 2)
        #expect(machine.reset(ids[0], .refusedStream)?.outcome == .notSent)
        #expect(machine.reset(ids[1], .internalError)?.outcome == .failed(.connectionClosed("the server reset the stream (\(HTTP2ErrorCode.internalError))")))
        #expect(machine.reset(ids[1], .internalError) == nil, "a stream ends once")
    }

    @Test("a lost connection fails written requests and returns unwritten ones as not sent") func aLostConnectionFailsWrittenRequestsAndReturnsUnwrittenOnesAsNotSent() {
        var machine = Machine()
        let written = machine.start(1)!
        machine.written(written)
        _ = machine.start(2)!
        let finishes = machine.connectionClosed("gone")
        #expect(finishes.map(\.waiter) == [1, 2])
        #expect(finishes.map(\.outcome) == [.failed(.connectionClosed("gone")), .notSent])
        #expect(machine.start(3) == nil)
        #expect(machine.openStreams == 0)
    }

    @Test("a failed write is not sent only if its end never left NIOHTTP 2") func aFailedWriteIsNotSentOnlyIfItsEndNeverLeftNIOHTTP2() {
        var machine = Machine()
        let held = machine.start(1)!
        #expect(machine.writeFailed(held)?.outcome == .notSent)
        #expect(machine.headers(held, Self.head(200), endStream: true) == nil, "a stream ends once")
        // Gone to TLS: the write may fail in TLS's buffer after part of it reached the server. The close decides.
        let out = machine.start(2)!
        machine.written(out)
        #expect(machine.writeFailed(out) == nil)
        #expect(machine.connectionClosed("gone").map(\.outcome) == [.failed(.connectionClosed("gone"))])
    }

    @Test("a stream closed underneath ends as its write says") func aStreamClosedUnderneathEndsAsItsWriteSays() {
        var machine = Machine()
        let unwritten = machine.start(1)!
        let written = machine.start(2)!
        machine.written(written)
        #expect(machine.closed(unwritten, reason: .cancel)?.outcome == .notSent)
        #expect(machine.closed(written, reason: .protocolError)?.outcome
            == .failed(.connectionClosed("the stream closed without an answer (\(HTTP2ErrorCode.protocolError))")))
        let refused = machine.start(3)!
        machine.written(refused)
        #expect(machine.closed(refused, reason: .refusedStream)?.outcome == .notSent)
    }

    @Test("an abandoned request fails with its reason and its late answer is ignored") func anAbandonedRequestFailsWithItsReasonAndItsLateAnswerIsIgnored() {
        var machine = Machine()
        let ids = Self.started(&machine, 1)
        #expect(machine.abandon(ids[0], because: .timeout)?.outcome == .failed(.timeout))
        #expect(machine.headers(ids[0], Self.head(200), endStream: true) == nil)
        #expect(machine.abandon(ids[0], because: .timeout) == nil)
    }

    @Test("the connection window is given back whole once half of it is used") func theConnectionWindowIsGivenBackWholeOnceHalfOfItIsUsed() {
        #expect(Machine.windowIncrement(inbound: 65_535) == nil)
        #expect(Machine.windowIncrement(inbound: 32_768) == nil)
        #expect(Machine.windowIncrement(inbound: 32_767) == 32_768)
        #expect(Machine.windowIncrement(inbound: 0) == 65_535)
        #expect(Machine.windowIncrement(inbound: 100, target: 1_000) == 900)
    }

    @Test("an oversized answer fails its request and asks for a reset") func anOversizedAnswerFailsItsRequestAndAsksForAReset() {
        var machine = Machine()
        let ids = Self.started(&machine, 1)
        _ = machine.headers(ids[0], Self.head(200), endStream: false)
        let big = ByteBuffer(repeating: 0x61, count: Machine.maxBodyBytes + 1)
        let result = machine.data(ids[0], big, endStream: false)
        #expect(result.reset)
        #expect(result.finish?.outcome == .failed(.transport("an answer body over \(Machine.maxBodyBytes) bytes")))
    }

    @Test("when stream IDs run out the last one is used and the connection closes after its answer") func whenStreamIDsRunOutTheLastOneIsUsedAndTheConnectionClosesAfterItsAnswer() {
        var machine = Machine(lastUsableStreamID: 5)
        let ids = Self.started(&machine, 3)
        #expect(ids == [1, 3, 5].map { HTTP2StreamID($0) })
        #expect(!machine.acceptsStreams)
        #expect(machine.start(4) == nil)
        for id in ids { _ = machine.headers(id, Self.head(200), endStream: true) }
        #expect(machine.drained)
    }
}
