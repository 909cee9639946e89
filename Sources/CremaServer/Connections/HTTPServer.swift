import CremaSettings
import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import ServiceLifecycle

/// Crema's HTTP/1.1 listener: unlike Hummingbird's server, which starts a task per accepted connection, it starts
/// one at the connection's first request head, so stalled connections cost no tasks (docs/reliability.md).
struct HTTPServer: Service, CustomStringConvertible {
    let host: String
    let port: Int
    let pipeline: ConnectionPipeline
    /// Serves one connection's requests in order (Hummingbird's loop over the responder).
    let connection: HTTP1Channel
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let onListening: @Sendable (Int) -> Void

    var description: String { "HTTPServer" }

    func run() async throws {
        let (arrivals, arrived) = AsyncStream.makeStream(of: ArrivedConnection.self)
        let quiescing = ServerQuiescingHelper(group: eventLoopGroup)
        let pipeline = self.pipeline
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: Int32(clamping: pipeline.limits.backlog))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try pipeline.configure(channel) { connection in arrived.yield(connection) }
                }
            }
        let listener: any Channel
        do {
            listener = try await bootstrap.bind(host: host, port: port).get()
        } catch let error as IOError {
            let reason = String(cString: strerror(error.errnoCode))
            throw HTTPServerError.cannotListen(
                host: host, port: port,
                reason: error.errnoCode == EADDRINUSE ? reason + " (another process has the port? choose one with --port or CREMA_HTTP_PORT)" : reason)
        } catch {
            throw HTTPServerError.cannotListen(host: host, port: port, reason: "\(error)")
        }
        let boundPort = listener.localAddress?.port ?? port
        logger.info("HTTP server listening", metadata: ["http.host": "\(host)", "http.port": "\(boundPort)"])
        onListening(boundPort)

        let connection = self.connection
        let logger = self.logger
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withDiscardingTaskGroup { group in
                    for await arrival in arrivals {
                        guard let channel = arrival.take() else { continue }
                        let clientGone = arrival.clientGone
                        group.addTask {
                            // A client that leaves mid-request cancels its answer, and with it the statement it waits on.
                            let answering = Task { await connection.handle(value: channel, logger: logger) }
                            clientGone.whenGone { answering.cancel() }
                            await withTaskCancellationHandler {
                                await answering.value
                            } onCancel: {
                                answering.cancel()
                            }
                        }
                    }
                }
            } onCancel: {
                // Cancelled rather than shut down: stop accepting and close what waits at once, without waiting.
                quiescing.initiateShutdown(promise: nil)
            }
        } onGracefulShutdown: {
            // Stop accepting; close idle and half-sent connections now and the others after their answer in
            // progress; end the loop once every connection is closed.
            let closed = listener.eventLoop.makePromise(of: Void.self)
            closed.futureResult.whenComplete { _ in arrived.finish() }
            quiescing.initiateShutdown(promise: closed)
        }
    }
}
