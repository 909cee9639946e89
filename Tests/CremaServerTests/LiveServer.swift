import CremaCore
import CremaServer
import CremaSettings
import CremaTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

/// `CremaApplication.build` on a free port with the given limits, reached over raw TCP.
struct LiveServer: Sendable {
    let port: Int
    let registry: PrometheusCollectorRegistry
    /// The server's database, for a test that looks at (or holds locks in) what the server works on.
    let db: TestDatabase

    static let healthRequest = "GET /health/live HTTP/1.1\r\nHost: crema\r\n\r\n"

    /// Runs the application until `body` returns, as `serve` below does (Hummingbird's `.live` tester would
    /// serve through Hummingbird's own server, and `CremaHTTPApplication` refuses it). One event loop serves it:
    /// it accepts connections in their order and finishes each one's set-up, and a close's clean-up, before it
    /// reads anything newer, so an answer to a later request is the event a test waits for, never a time.
    static func run(
        _ limits: ConnectionLimits, _ label: String = #function, logger: Logger = Logger(label: "test"),
        _ body: @escaping @Sendable (LiveServer) async throws -> Void
    ) async throws {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await TestDatabase.with(label) { db in
                let dependencies = try APIHarness.dependencies(pool: db.pool)
                try await serve(dependencies, limits: limits, eventLoopGroup: loop, logger: logger) { port in
                    try await body(LiveServer(port: port, registry: dependencies.registry, db: db))
                }
            }
        } catch {
            try? await loop.shutdownGracefully()
            throw error
        }
        try await loop.shutdownGracefully()
    }

    /// Runs the application as `crema serve` does, on a free port, until `body` (given the port) returns.
    static func serve(
        _ dependencies: CremaApplication.Dependencies, limits: ConnectionLimits = .init(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger = Logger(label: "test"),
        _ body: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let app = CremaApplication.build(
            dependencies, host: "127.0.0.1", port: 0, logger: logger, limits: limits, eventLoopGroup: eventLoopGroup
        ) { port in listening.yield(port) }
        let services = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            do {
                var iterator = ports.makeAsyncIterator()
                try await body(try #require(await iterator.next()))
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    func connect() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    }

    /// Opens a connection, sends `text` (if any) and returns everything the server sent before it closed.
    func sendAndReadUntilClosed(_ text: String) async throws -> String {
        try await connect().executeThenClose { inbound, outbound in
            // The server may answer and close before all of a large request is written; its answer still counts.
            if !text.isEmpty { try? await outbound.write(ByteBuffer(string: text)) }
            var received = ByteBuffer()
            do {
                for try await var chunk in inbound { received.writeBuffer(&chunk) }
            } catch let error as IOError where error.errnoCode == ECONNRESET {
                // A reset after the answer still ends the stream; what was received before it counts.
            }
            return String(buffer: received)
        }
    }

    /// The value of one series in the application's registry (0 when absent).
    func metric(_ series: String) -> Double { registry.value(of: series) }

    /// `GET /health/live` on a connection opened now, 200 or a throw: the answer proves the server has handled
    /// everything that happened before it (see `run`). `whileOpen` reads what a test needs before it closes.
    @discardableResult
    func answerOnNewConnection<T: Sendable>(whileOpen read: @Sendable () -> T = { () }) async throws -> T {
        try await connect().executeThenClose { inbound, outbound in
            var iterator = inbound.makeAsyncIterator()
            let answer = try await Self.exchange(Self.healthRequest, outbound, &iterator)
            guard answer.hasPrefix("HTTP/1.1 200 OK\r\n") else { throw Failure.closedEarly(answer) }
            return read()
        }
    }

    enum Failure: Error { case closedEarly(String) }

    /// Sends one request on a keep-alive connection and reads its answer, as far as its Content-Length says.
    static func exchange(
        _ request: String, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, _ inbound: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    ) async throws -> String {
        try await outbound.write(ByteBuffer(string: request))
        var received = ByteBuffer()
        while var chunk = try await inbound.next() {
            received.writeBuffer(&chunk)
            let text = String(buffer: received)
            guard let end = text.range(of: "\r\n\r\n") else { continue }
            let length = text[..<end.lowerBound].split(separator: "\r\n")
                .first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if text[end.upperBound...].utf8.count >= length { return text }
        }
        throw Failure.closedEarly(String(buffer: received))
    }

    static func errorDocument(_ answer: String) -> [String: Any]? {
        guard let body = answer.range(of: "\r\n\r\n").map({ answer[$0.upperBound...] }),
            let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        else { return nil }
        return json["error"] as? [String: Any]
    }

    static func errorCode(_ answer: String) -> String? { errorDocument(answer)?["code"] as? String }
}

extension PrometheusCollectorRegistry {
    /// The value of one series in the registry's text exposition (0 when absent, NaN when unreadable).
    func value(of series: String) -> Double {
        for line in emitToString().split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1)) ?? .nan
        }
        return 0
    }
}
