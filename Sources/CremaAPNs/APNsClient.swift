import AsyncHTTPClient
public import CremaAPNsProtocol
public import Foundation
public import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

/// Sends pushes to APNs (or a compatible server) over HTTP/2 + TLS with ES256 provider tokens. One instance
/// serves every app: each send names the key it is signed with, and each key gets its own cached JWT and its own
/// connections. Meant to be shared by every concurrent send.
public final class APNsClient: Sendable {
    private let configuration: APNsClientConfiguration
    private let keyring: ProviderTokenKeyring<HTTPClient>
    private let logger: Logger
    private let transportLogger: Logger

    /// Builds the client; `now` is the clock provider tokens are dated and aged by (tests inject one).
    public init(
        configuration: APNsClientConfiguration,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let file = configuration.extraTrustRootsPEMFile {
            // Added to the system roots, not instead of them: one process may reach Apple and a simulator.
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(file))]
        }
        var http = HTTPClient.Configuration(
            tlsConfiguration: tls,
            timeout: .init(connect: TimeAmount(configuration.connectTimeout)),
            connectionPool: .init(idleTimeout: .seconds(3600))
        )
        http.connectionPool.retryConnectionEstablishment = configuration.retriesFailedConnections
        // ALPN offers h2 first; APNs only speaks HTTP/2, a plain test server may fall back to HTTP/1.1.
        http.httpVersion = .automatic
        http.decompression = .disabled
        // AsyncHTTPClient logs whole HTTP/1 request heads (the JWT, the device token) at trace: never below debug.
        var transportLogger = logger
        transportLogger.logLevel = max(logger.logLevel, .debug)
        let httpConfiguration = http
        let poolLogger = transportLogger
        self.keyring = ProviderTokenKeyring(
            lifetime: configuration.tokenLifetime, now: now,
            connect: { _ in
                HTTPClient(
                    eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: httpConfiguration,
                    backgroundActivityLogger: poolLogger)
            },
            release: { http in
                // An idle key's pool has nothing in flight; closing it needs no one to wait.
                Task { try? await http.shutdown() }
            })
        self.configuration = configuration
        self.logger = logger
        self.transportLogger = transportLogger
    }

    public convenience init(configuration: APNsClientConfiguration, logger: Logger) throws {
        try self.init(configuration: configuration, logger: logger, now: { Date() })
    }

    /// Sends one push signed with `key` (the JWT of that key, reused for its lifetime) and returns APNs' answer.
    /// Non-2xx answers are returned (not thrown); this throws ``APNsClientError`` only when there was no answer:
    /// timeout, connection failure or drop, TLS failure.
    ///
    /// On 403 `ExpiredProviderToken` the client signs a new token for that key and sends the request once more
    /// itself; the second answer is returned whatever it is.
    public func send(
        _ request: APNsRequest,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsResponse {
        guard let lane = keyring.lane(for: key) else { throw .shutDown }
        let token = lane.tokens.token()
        let response = try await perform(request, token: token, on: lane.connection)
        guard response.status == 403, response.reason == "ExpiredProviderToken" else { return response }
        let fresh = lane.tokens.replace(token)
        logger.debug(
            "APNs said the provider token expired; retrying with a new one",
            metadata: [
                "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                "apns.key_id": "\(key.keyID)", "apns.key_fingerprint": "\(key.fingerprint)",
            ])
        return try await perform(request, token: fresh, on: lane.connection)
    }

    /// Closes the connections; sends in flight fail with ``APNsClientError/shutDown``.
    public func shutdown() async throws {
        for http in keyring.close() { try await http.shutdown() }
    }

    private func perform(
        _ request: APNsRequest,
        token: ProviderTokenCache.Token,
        on pool: HTTPClient,
        resentUnsent: Bool = false
    ) async throws(APNsClientError) -> APNsResponse {
        var url = configuration.baseURL(for: request.environment).absoluteString
        while url.hasSuffix("/") { url.removeLast() }
        var http = HTTPClientRequest(url: url + "/3/device/" + request.deviceToken)
        http.method = .POST
        http.headers = Self.headers(for: request, jwt: token.jwt)
        http.body = .bytes(ByteBuffer(data: request.body))

        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        do {
            let answer = try await pool.execute(http, deadline: deadline, logger: transportLogger)
            let body = try await answer.body.collect(upTo: 64 * 1024)
            let response = Self.response(status: Int(answer.status.code), headers: answer.headers, body: body)
            logger.debug(
                "APNs answered",
                metadata: [
                    "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                    "apns.push_type": "\(request.pushType.rawValue)", "apns.status": "\(response.status)",
                    "apns.reason": "\(response.reason ?? "")",
                ])
            return response
        } catch {
            // A request handed to a connection that was closing never left this process (the pool had not yet
            // seen the close): sending it once more cannot duplicate a push.
            if !resentUnsent, Self.wasNeverSent(error), !Task.isCancelled {
                logger.debug(
                    "APNs connection closed before the request was written; sending it again",
                    metadata: [
                        "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                    ])
                return try await perform(request, token: token, on: pool, resentUnsent: true)
            }
            let failure = Self.classify(error)
            logger.debug(
                "APNs send failed without an answer",
                metadata: [
                    "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                    "error.code": "\(failure.code)",
                ])
            throw failure
        }
    }

    /// The request headers exactly as docs/apns.md §1.2 names them; optional ones only when set.
    static func headers(for request: APNsRequest, jwt: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: "bearer " + jwt)
        headers.add(name: "apns-push-type", value: request.pushType.rawValue)
        headers.add(name: "apns-topic", value: request.topic)
        headers.add(name: "apns-id", value: request.apnsID.uuidString.lowercased())
        if let priority = request.priority {
            headers.add(name: "apns-priority", value: String(priority))
        }
        if let expiration = request.expiration {
            headers.add(name: "apns-expiration", value: String(Int64(expiration.timeIntervalSince1970.rounded(.down))))
        }
        if let collapseID = request.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID)
        }
        return headers
    }

    /// Reads an answer: `{"reason":…,"timestamp":ms}` body, `apns-id` and `Retry-After` headers.
    static func response(status: Int, headers: HTTPHeaders, body: ByteBuffer) -> APNsResponse {
        var response = APNsResponse(status: status)
        response.apnsID = headers.first(name: "apns-id").flatMap(UUID.init(uuidString:))
        if let retryAfter = headers.first(name: "retry-after"),
            let seconds = TimeInterval(retryAfter.trimmingCharacters(in: .whitespaces)), seconds.isFinite, seconds >= 0
        {
            response.retryAfter = seconds
        }
        if body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        {
            response.reason = object["reason"] as? String
            if let milliseconds = (object["timestamp"] as? NSNumber)?.doubleValue {
                response.timestamp = Date(timeIntervalSince1970: milliseconds / 1000)
            }
        }
        return response
    }

    /// Errors that mean the request was never written to the network.
    static func wasNeverSent(_ error: any Error) -> Bool {
        if let error = error as? ChannelError, error == .ioOnClosedChannel { return true }
        if let error = error as? HTTPClientError, error == .cancelled { return true }
        return false
    }

    static func classify(_ error: any Error) -> APNsClientError {
        if let error = error as? APNsClientError { return error }
        if error is CancellationError { return .cancelled }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout:
                return .timeout
            case .remoteConnectionClosed: return .connectionClosed("the server closed the connection")
            case .cancelled, .requestStreamCancelled:
                // The pool also "cancels" requests it had queued for a connection that then closed.
                return Task.isCancelled
                    ? .cancelled : .connectionClosed("the connection closed before the request was sent")
            case .alreadyShutdown: return .shutDown
            case .invalidURL, .emptyHost, .emptyScheme: return .invalidRequest("\(error)")
            default: return .transport("\(error)")
            }
        }
        if let error = error as? NIOSSLError {
            switch error {
            case .uncleanShutdown: return .connectionClosed("TLS connection closed without close_notify")
            default: return .tlsFailed("\(error)")
            }
        }
        if error is NIOSSLExtraError || error is BoringSSLError { return .tlsFailed("\(error)") }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return .timeout
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                return .connectionClosed("\(error)")
            default: return .connectionFailed("\(error)")
            }
        }
        if error is IOError { return .connectionFailed("\(error)") }
        let name = String(describing: type(of: error))
        if name.contains("Connection") { return .connectionFailed("\(error)") }
        if name.contains("HTTP2") || name.contains("StreamClosed") { return .connectionClosed("\(error)") }
        return .transport("\(error)")
    }

    /// A device token for logs: the first 8 hex characters and an ellipsis, never the whole token.
    static func shortened(_ token: String) -> String {
        String(token.prefix(8)) + "…"
    }

    private static func id(_ uuid: UUID) -> String { uuid.uuidString.lowercased() }
}

extension TimeAmount {
    /// A Swift `Duration` as NIO's time amount (nanosecond precision).
    fileprivate init(_ duration: Duration) {
        self = .nanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
