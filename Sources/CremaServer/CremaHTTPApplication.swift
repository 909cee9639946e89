import CremaClock
public import Hummingbird
import HummingbirdCore
public import Logging
public import NIOCore
import NIOHTTP1
public import ServiceLifecycle

/// Crema's HTTP side as a Hummingbird application (the responder `.router` tests drive, the services beside it),
/// served by Crema's `HTTPServer`, not Hummingbird's, which gives a connection a task before it sends a byte.
public struct CremaHTTPApplication: ApplicationProtocol {
    public let responder: RouterResponder<CremaRequestContext>
    public let logger: Logger
    public let services: [any Service]
    public let eventLoopGroup: any EventLoopGroup
    let host: String
    let port: Int
    let pipeline: ConnectionPipeline
    /// The root's clock, for the `Date` field.
    let clock: CremaClock
    let onListening: @Sendable (Int) -> Void

    /// Thrown by `server`: HummingbirdTesting's `.live` mode would serve through Hummingbird's own server,
    /// without Crema's connection guard; live tests run the application itself (`run()`).
    public enum ServedByRun: Error { case useRun }

    /// Never used by Crema (`run()` serves); throws `ServedByRun` so that `.live` testing fails loudly.
    public var server: HTTPServerBuilder { HTTPServerBuilder { _ in throw ServedByRun.useRun } }

    init(
        responder: RouterResponder<CremaRequestContext>, logger: Logger, services: [any Service], host: String, port: Int,
        pipeline: ConnectionPipeline, eventLoopGroup: any EventLoopGroup, clock: CremaClock, onListening: @escaping @Sendable (Int) -> Void
    ) {
        self.eventLoopGroup = eventLoopGroup
        self.responder = responder
        self.logger = logger
        self.services = services
        self.host = host
        self.port = port
        self.pipeline = pipeline
        self.clock = clock
        self.onListening = onListening
    }

    /// Runs the services and the server in one group; a graceful shutdown stops the server first.
    public func run() async throws {
        let server = HTTPServer(
            host: host, port: port, pipeline: pipeline, connection: HTTP1Channel(responder: answer()),
            eventLoopGroup: eventLoopGroup, logger: logger, onListening: onListening)
        try await ServiceGroup(configuration: .init(services: services + [server], logger: logger)).run()
    }

    /// One request through the router, with a request id in its logger and the `Date` and `Server` fields.
    func answer() -> HTTP1Channel.Responder {
        let responder = self.responder
        let logger = self.logger
        let dates = HTTPDateHeader(clock: clock)
        return { request, writer, channel in
            var requestLogger = logger
            requestLogger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            let context = CremaRequestContext(source: .init(channel: channel, logger: requestLogger))
            var response: Response
            do {
                // The request's logger is also the task's (`Logger.current`), as under Hummingbird's server.
                response = try await withLogger(requestLogger) { _ in try await responder.respond(to: request, context: context) }
            } catch let error as HTTPParserError {
                throw error  // the connection's loop answers 400 and closes
            } catch {
                // ErrorMiddleware turns every error into the API's document; this is the net behind it.
                requestLogger.error("unanswered error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
                response = Response(status: .internalServerError)
            }
            response.headers[.date] = dates.value
            response.headers[.server] = "crema"
            do {
                try await writer.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Not rethrown as one: the loop would answer a second time, into this answer.
                throw ConnectionEnded.unparsableWhileAnswering
            }
        }
    }

    /// Ends a connection whose client sent bytes that do not parse while its answer was being written.
    enum ConnectionEnded: Error { case unparsableWhileAnswering }
}
