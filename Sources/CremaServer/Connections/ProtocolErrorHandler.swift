import CremaAPI
import CremaAPNsProtocol
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers what never reaches the router with the API's JSON error document: a header over the decoder's
/// limit (431), bytes that are not HTTP/1.1 (400), and `CONNECT`, which NIO's encoder would send without a
/// body (and Hummingbird then without any answer), so it is answered here as the router would (405 + Allow).
final class ProtocolErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Hummingbird's default decoder limit for one header field and for all of them (80 KiB).
    static let headerLimit = 80 * 1024

    private let routes: RouteTable
    /// Requests passed on whose response is not written to its end: an answer of ours must not cut into one.
    private var unanswered = 0
    private var answered = false

    init(routes: RouteTable) {
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if answered { return }
        let part = unwrapInboundIn(data)
        if case .head(let request) = part {
            if request.method == .connect {
                // The decoder stops parsing after CONNECT, so the connection cannot carry another request.
                if unanswered == 0 { answer(.route(Self.routerAnswer(request, routes: routes)), context: context) } else { context.close(promise: nil) }
                answered = true
                return
            }
            unanswered += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Mid-response (a pipelined request), Hummingbird's own 400-and-close stays in charge. A closed
        // connection has no one to answer: the decoder reports the half request it held when a read deadline
        // (or the client) closed it, and answering that cost a JSON encoding and a linger timer per stalled
        // connection (docs/reliability.md, stalled connections).
        guard let parseError = error as? HTTPParserError, unanswered == 0, !answered, context.channel.isActive else {
            context.fireErrorCaught(error)
            return
        }
        if case .headerOverflow = parseError {
            answer(.headerTooLarge(limit: Self.headerLimit), context: context)
        } else {
            answer(.malformedRequest, context: context)
        }
    }

    private func answer(_ error: PipelineError, context: ChannelHandlerContext) {
        answered = true
        context.triggerUserOutboundEvent(RawResponse(bytes: error.response), promise: nil)
    }

    /// What the router answers an unrouted method: 405 with the path's methods, or 404 for an unknown path.
    static func routerAnswer(_ request: HTTPRequest, routes: RouteTable) -> APIError {
        let path = request.path.map { String($0.prefix { $0 != "?" }) } ?? ""
        let allowed = routes.methods(for: path)
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}
