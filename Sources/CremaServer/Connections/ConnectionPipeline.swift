import CremaSettings
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Prometheus

/// What every accepted connection gets: past the cap, a 503 and a close; below it, `AwaitingHeadHandler` alone
/// until its first request head has arrived, then the HTTP/1.1 pipeline `HTTP1Channel` builds, with Crema's guards.
struct ConnectionPipeline: Sendable {
    let limits: ConnectionLimits
    let routes: RouteTable
    let gate: ConnectionGate
    let metrics: ConnectionMetrics
    let logger: Logger

    /// Builds `channel`'s pipeline, on its event loop, before it is registered; `handOver` receives it once
    /// its first request head has arrived.
    func configure(_ channel: any Channel, handOver: @escaping @Sendable (ArrivedConnection) -> Void) throws {
        let pipeline = channel.pipeline.syncOperations
        guard gate.admit() else {
            metrics.refused.increment()
            try pipeline.addHandler(RawResponseWriter(answerAtOnce: PipelineError.tooManyConnections.response))
            return
        }
        metrics.open.increment()
        channel.closeFuture.whenComplete { [gate, metrics] _ in
            gate.release()
            metrics.open.decrement()
        }
        try pipeline.addHandler(AwaitingHeadHandler(limits: limits, metrics: metrics) { channel, readingUntil in
            try addHTTPHandlers(channel.pipeline.syncOperations, readingUntil: readingUntil, handOver: handOver)
        })
    }

    /// The pipeline HTTP1Channel builds, with Crema's guards around the codec and `FirstRequestHandler` last; the
    /// request whose head arrived keeps the read deadline it started under.
    private func addHTTPHandlers(
        _ pipeline: ChannelPipeline.SynchronousOperations, readingUntil: NIODeadline?,
        handOver: @escaping @Sendable (ArrivedConnection) -> Void
    ) throws {
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = ProtocolErrorHandler.headerLimit
        decoderLimits.maxHeaderListSize = ProtocolErrorHandler.headerLimit
        decoderLimits.maxHeaderFieldCount = 1000  // as Hummingbird's HTTP1Channel
        try pipeline.addHandler(RawResponseWriter())
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: false,  // requests on one connection are answered in order by its one task
            withErrorHandling: false,  // ProtocolErrorHandler answers parse errors with the API's error document
            withOutboundHeaderValidation: false,  // swift-http-types has validated the fields
            withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: decoderLimits)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        let clientGone = ClientGoneWatch()
        try pipeline.addHandler(ClientGoneHandler(watch: clientGone, abandoned: metrics.abandoned))
        try pipeline.addHandler(ConnectionDeadlineHandler(limits: limits, metrics: metrics, readingUntil: readingUntil))
        try pipeline.addHandler(ProtocolErrorHandler(routes: routes))
        // Closes the connection after the answer in progress when the server shuts down (idle ones at once).
        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
        try pipeline.addHandler(FirstRequestHandler(clientGone: clientGone, handOver: handOver))
    }
}
