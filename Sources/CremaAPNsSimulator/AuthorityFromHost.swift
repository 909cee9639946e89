import NIOCore
import NIOHPACK
import NIOHTTP2

/// Gives a request stream that names its host in a `host` header instead of `:authority` the pseudo-header,
/// as some APNs clients (aioapns) do and APNs accepts: NIO's HTTP/1 codec would otherwise reset the stream
/// without an answer, which no real APNs does.
final class AuthorityFromHost: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var payload = unwrapInboundIn(data)
        if case .headers(var headers) = payload, !headers.headers.contains(name: ":authority"),
            let host = headers.headers.first(name: "host")
        {
            var rewritten = HPACKHeaders()
            // Pseudo-headers must come first.
            for (name, value, indexing) in headers.headers where name.hasPrefix(":") {
                rewritten.add(name: name, value: value, indexing: indexing)
            }
            rewritten.add(name: ":authority", value: host)
            for (name, value, indexing) in headers.headers where !name.hasPrefix(":") && name != "host" {
                rewritten.add(name: name, value: value, indexing: indexing)
            }
            headers.headers = rewritten
            payload = .headers(headers)
        }
        context.fireChannelRead(wrapInboundOut(payload))
    }
}
