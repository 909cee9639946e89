import NIOCore
import NIOHTTP2

/// Ends an answer on its last real frame, as APNs does: NIO's HTTP/1 codec closes every stream with an extra
/// empty DATA frame, which some clients (aioapns) try to parse as JSON and fail on.
final class EndStreamOnLastFrame: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// The latest HEADERS or DATA frame, held back until we know whether it is the last one.
    private var held: (payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?)?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let payload = unwrapOutboundIn(data)
        switch payload {
        case .data(let data) where data.endStream && Self.isEmpty(data.data) && held != nil:
            let (last, lastPromise) = held!
            held = nil
            context.write(wrapOutboundOut(Self.ending(last)), promise: lastPromise)
            promise?.succeed(())
        case .headers(let headers) where !headers.endStream:
            releaseHeld(context: context)
            held = (payload, promise)
        case .data(let data) where !data.endStream:
            releaseHeld(context: context)
            held = (payload, promise)
        default:
            releaseHeld(context: context)
            context.write(data, promise: promise)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releaseHeld(context: context)
    }

    private func releaseHeld(context: ChannelHandlerContext) {
        guard let (payload, promise) = held else { return }
        held = nil
        context.write(wrapOutboundOut(payload), promise: promise)
    }

    private static func ending(_ payload: HTTP2Frame.FramePayload) -> HTTP2Frame.FramePayload {
        switch payload {
        case .headers(var headers):
            headers.endStream = true
            return .headers(headers)
        case .data(var data):
            data.endStream = true
            return .data(data)
        default:
            return payload
        }
    }

    private static func isEmpty(_ data: IOData) -> Bool {
        switch data {
        case .byteBuffer(let buffer): buffer.readableBytes == 0
        case .fileRegion(let region): region.readableBytes == 0
        }
    }
}
