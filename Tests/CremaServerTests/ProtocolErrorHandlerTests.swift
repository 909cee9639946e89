@testable import CremaServer
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing

/// The pipeline's own error answers, on NIO's embedded channel: what the decoder reports decides whether a
/// client is answered, and a connection that is already closed never is.
@Suite struct ProtocolErrorHandlerTests {
    @Test("garbage on an open connection is answered with malformed request") func garbageOnAnOpenConnectionIsAnsweredWithMalformedRequest() throws {
        let (channel, answers) = try Self.pipeline()
        _ = try? channel.writeInbound(ByteBuffer(string: "\u{1}\u{2} not http\r\n\r\n"))
        #expect(answers.codes == ["malformed_request"])
        _ = try? channel.finish()
    }

    @Test("a half request cut short by the close is not answered") func aHalfRequestCutShortByTheCloseIsNotAnswered() throws {
        let (channel, answers) = try Self.pipeline()
        try channel.writeInbound(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: crema\r\n"))
        #expect(answers.codes.isEmpty)
        // The close (a read deadline's, or the client's) makes the decoder report the half request it holds.
        let decoderError = Result { try channel.finish() }
        #expect(answers.codes.isEmpty)
        #expect(throws: HTTPParserError.self) { try decoderError.get() }
    }

    /// Decoder, HTTP types codec and the handler under test, behind a recorder of the answers it asks for.
    static func pipeline() throws -> (EmbeddedChannel, RawResponseRecorder) {
        let answers = RawResponseRecorder()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([
            answers, ByteToMessageHandler(HTTPRequestDecoder()), HTTP1ToHTTPServerCodec(secure: false),
            ProtocolErrorHandler(routes: RouteTable()),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, answers)
    }
}

/// Stands where `RawResponseWriter` does and keeps the error code of every answer asked of it.
final class RawResponseRecorder: ChannelOutboundHandler {
    typealias OutboundIn = IOData

    private(set) var codes: [String] = []

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let response = event as? RawResponse else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        let text = String(buffer: response.bytes)
        let code = text.range(of: #""code":""#).map { text[$0.upperBound...].prefix { $0 != "\"" } }
        codes.append(code.map(String.init) ?? "?")
        promise?.succeed()
    }
}
