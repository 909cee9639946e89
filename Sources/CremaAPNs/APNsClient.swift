public import CremaAPNsKey
public import CremaAPNsProtocol
public import CremaClock
import Foundation
public import Logging
import NIOCore
import NIOFoundationCompat
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Sends pushes to APNs (or a compatible server) over HTTP/2 + TLS with ES256 provider tokens. One instance
/// serves every app: each send names the key it is signed with, and each key gets its own cached JWT and its own
/// connection per APNs host. Meant to be shared by every concurrent send: the sends that meet on a connection are
/// written together (docs/decisions.md, "APNs client and simulator", Transport).
public final class APNsClient: Sendable {
    private let configuration: APNsClientConfiguration
    private let keyring: ProviderTokenKeyring<APNsKeyConnections>
    private let endpoints: [APNsEnvironment: Result<APNsEndpoint, APNsClientError>]
    private let logger: Logger

    /// Builds the client; `clock` dates and ages provider tokens and spaces out reconnection attempts (tests inject
    /// one).
    public init(
        configuration: APNsClientConfiguration,
        logger: Logger,
        clock: CremaClock
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        // APNs speaks HTTP/2 only.
        tls.applicationProtocols = ["h2"]
        if let file = configuration.extraTrustRootsPEMFile {
            // Added to the system roots, not instead of them: one process may reach Apple and a simulator.
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(file))]
        }
        let connector = APNsConnector(
            sslContext: try NIOSSLContext(configuration: tls), group: MultiThreadedEventLoopGroup.singleton,
            connectTimeout: configuration.connectTimeout, retriesFailedConnections: configuration.retriesFailedConnections, clock: clock)
        self.keyring = ProviderTokenKeyring(
            lifetime: configuration.tokenLifetime, now: { clock.now },
            connect: { _ in APNsKeyConnections(connector: connector) },
            // An idle key's connections have nothing in flight; closing them needs no one to wait.
            release: { $0.close() })
        var endpoints: [APNsEnvironment: Result<APNsEndpoint, APNsClientError>] = [:]
        for environment in [APNsEnvironment.production, .sandbox] {
            endpoints[environment] = Result { () throws(APNsClientError) in try APNsEndpoint(configuration.baseURL(for: environment)) }
        }
        self.endpoints = endpoints
        self.configuration = configuration
        self.logger = logger
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
        for closed in keyring.close().flatMap({ $0.close() }) { try? await closed.get() }
    }

    /// Sends `request` on its key's connection to its host. A request the server never processed (refused, above a
    /// GOAWAY's last stream, or never written before a close) goes again, on a new connection when the old one
    /// no longer takes requests; one that may have reached APNs is never sent twice by the client.
    private func perform(
        _ request: APNsRequest,
        token: ProviderTokenCache.Token,
        on connections: APNsKeyConnections
    ) async throws(APNsClientError) -> APNsResponse {
        let endpoint = try endpoints[request.environment]!.get()
        let link = try connections.link(to: endpoint)
        let wire = APNsWireRequest(headers: Self.headers(for: request, jwt: token.jwt, endpoint: endpoint), body: ByteBuffer(data: request.body))
        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        var resends = 0
        while true {
            let outcome: APNsStreamOutcome
            do throws(APNsClientError) {
                if Task.isCancelled { throw .cancelled }
                outcome = await (try await link.connection()).send(wire, deadline: deadline)
            } catch {
                log(failure: error, request)
                throw error
            }
            switch outcome {
            case .answered(let answer):
                let response = Self.response(status: answer.status, headers: answer.headers, body: answer.body)
                logger.debug(
                    "APNs answered",
                    metadata: [
                        "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                        "apns.push_type": "\(request.pushType.rawValue)", "apns.status": "\(response.status)",
                        "apns.reason": "\(response.reason ?? "")",
                    ])
                return response
            case .notSent where resends < Self.maxResends && NIODeadline.now() < deadline:
                resends += 1
                logger.debug(
                    "APNs did not process the request; sending it again",
                    metadata: [
                        "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                    ])
            case .notSent:
                let failure = APNsClientError.connectionClosed("the request was not processed in \(resends + 1) attempts")
                log(failure: failure, request)
                throw failure
            case .failed(let failure):
                log(failure: failure, request)
                throw failure
            }
        }
    }

    /// Times one request goes again after the server said it never processed it.
    static var maxResends: Int { 3 }

    private func log(failure: APNsClientError, _ request: APNsRequest) {
        logger.debug(
            "APNs send failed without an answer",
            metadata: [
                "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
                "error.code": "\(failure.code)",
            ])
    }

    /// The request's header block: the pseudo-header fields, then the headers exactly as docs/apns.md §1.2 names
    /// them (optional ones only when set).
    static func headers(for request: APNsRequest, jwt: String, endpoint: APNsEndpoint) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: endpoint.authority)
        headers.add(name: ":path", value: endpoint.pathPrefix + "/3/device/" + request.deviceToken)
        headers.add(name: "content-length", value: String(request.body.count))
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
    static func response(status: Int, headers: HPACKHeaders, body: ByteBuffer) -> APNsResponse {
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

    static func classify(_ error: any Error) -> APNsClientError {
        if let error = error as? APNsClientError { return error }
        if error is CancellationError { return .cancelled }
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
