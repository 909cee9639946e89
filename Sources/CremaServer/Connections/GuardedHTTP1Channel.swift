import HummingbirdCore
import Logging
import NIOCore
import Prometheus

/// Hummingbird's HTTP/1.1 channel behind a connection guard: past the cap a connection gets a 503 and is
/// closed without an HTTP pipeline; below it, the pipeline gains a raw-answer writer in front and the
/// deadline and protocol-error handlers behind the HTTP codec.
struct GuardedHTTP1Channel: ServerChildChannel {
    /// An accepted connection, or a refused one that only needs its 503 written.
    enum Value: ServerChildChannelValue {
        case http(HTTP1Channel.Value)
        case refused(any Channel)

        var channel: any Channel {
            switch self {
            case .http(let value): value.channel
            case .refused(let channel): channel
            }
        }
    }

    let http: HTTP1Channel
    let gate: ConnectionGate
    let metrics: ConnectionMetrics

    /// The server builder `CremaApplication.build` hands to Hummingbird.
    static func server(limits: ConnectionLimits, registry: PrometheusCollectorRegistry, routes: RouteTable) -> HTTPServerBuilder {
        let metrics = ConnectionMetrics(registry: registry)
        let gate = ConnectionGate(limit: limits.maxConnections)
        return HTTPServerBuilder { responder in
            let configuration = HTTP1Channel.Configuration(
                additionalChannelHandlers: [
                    ConnectionDeadlineHandler(limits: limits, metrics: metrics), ProtocolErrorHandler(routes: routes),
                ],
                idleTimeout: nil)
            return GuardedHTTP1Channel(http: HTTP1Channel(responder: responder, configuration: configuration), gate: gate, metrics: metrics)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard gate.admit() else {
            metrics.refused.increment()
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RawResponseWriter(answerAtOnce: PipelineError.tooManyConnections.response))
                return .refused(channel)
            }
        }
        metrics.open.increment()
        channel.closeFuture.whenComplete { [gate, metrics] _ in
            gate.release()
            metrics.open.decrement()
        }
        let http = self.http
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RawResponseWriter())
        }.flatMap { _ in
            http.setup(channel: channel, logger: logger)
        }.map { .http($0) }
    }

    func handle(value: Value, logger: Logger) async {
        switch value {
        case .http(let channel): await http.handle(value: channel, logger: logger)
        case .refused: break  // answered and closed by its handler
        }
    }
}
