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
    private let broadcastEndpoints: [APNsEnvironment: Result<APNsEndpoint, APNsClientError>]
    private let channelsEndpoints: [APNsEnvironment: Result<APNsEndpoint, APNsClientError>]
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
        self.endpoints = Self.endpoints(configuration.baseURL(for:))
        self.broadcastEndpoints = Self.endpoints(configuration.broadcastURL(for:))
        self.channelsEndpoints = Self.endpoints(configuration.channelsURL(for:))
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
        let endpoint = try endpoints[request.environment]!.get()
        let metadata: Logger.Metadata = [
            "apns.token": "\(Self.shortened(request.deviceToken))", "apns.id": "\(Self.id(request.apnsID))",
            "apns.push_type": "\(request.pushType.rawValue)",
        ]
        let answer = try await exchange(signedBy: key, with: endpoint, metadata: metadata) { jwt in
            APNsWireRequest(headers: Self.headers(for: request, jwt: jwt, endpoint: endpoint), body: ByteBuffer(data: request.body))
        }
        return Self.response(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// Sends one broadcast to every device subscribed to `request.channelID`, signed with `key`, to the broadcast
    /// host of the channel's environment. Same contract as ``send(_:signedBy:)``: non-2xx answers are returned
    /// (classify them with ``APNsResponse/broadcastDisposition``), errors are thrown only when there was no answer,
    /// and an `ExpiredProviderToken` is retried once with a new token.
    public func broadcast(
        _ request: APNsBroadcastRequest,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsResponse {
        let endpoint = try broadcastEndpoints[request.environment]!.get()
        try Self.checkBundleID(request.bundleID)
        let metadata: Logger.Metadata = [
            "apns.channel_id": "\(request.channelID)", "apns.id": "\(Self.id(request.requestID))",
            "apns.push_type": "broadcast",
        ]
        let answer = try await exchange(signedBy: key, with: endpoint, metadata: metadata) { jwt in
            APNsWireRequest(
                headers: Self.broadcastHeaders(for: request, jwt: jwt, endpoint: endpoint), body: ByteBuffer(data: request.body))
        }
        return Self.response(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// Creates a broadcast channel for `bundleID` in `environment` (`POST /1/apps/<bundleID>/channels`): on 201 the
    /// answer's `channelID` is the new channel's. At APNs' limit the answer is 400 `CannotCreateChannelConfig`.
    public func createChannel(
        bundleID: String,
        environment: APNsEnvironment,
        storage: APNsChannelStorage,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsChannelAnswer {
        let body = Data(#"{"message-storage-policy":\#(storage.messageStoragePolicy),"push-type":"LiveActivity"}"#.utf8)
        return try await manageChannels(
            method: "POST", route: "/channels", channelID: nil, body: body, bundleID: bundleID, environment: environment,
            signedBy: key)
    }

    /// Reads one channel (`GET /1/apps/<bundleID>/channels` with `apns-channel-id`): its storage on 200, 400
    /// `ChannelNotRegistered` when APNs has no such channel.
    public func readChannel(
        _ channelID: String,
        bundleID: String,
        environment: APNsEnvironment,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsChannelAnswer {
        try await manageChannels(
            method: "GET", route: "/channels", channelID: channelID, body: nil, bundleID: bundleID, environment: environment,
            signedBy: key)
    }

    /// Deletes one channel (`DELETE /1/apps/<bundleID>/channels` with `apns-channel-id`): 204, and it cannot be
    /// undone (messages APNs already stored may still be delivered).
    public func deleteChannel(
        _ channelID: String,
        bundleID: String,
        environment: APNsEnvironment,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsChannelAnswer {
        try await manageChannels(
            method: "DELETE", route: "/channels", channelID: channelID, body: nil, bundleID: bundleID,
            environment: environment, signedBy: key)
    }

    /// Lists every channel of `bundleID` in `environment` (`GET /1/apps/<bundleID>/all-channels`), for reconciling
    /// what Crema stored with what APNs keeps.
    public func listChannels(
        bundleID: String,
        environment: APNsEnvironment,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsChannelAnswer {
        try await manageChannels(
            method: "GET", route: "/all-channels", channelID: nil, body: nil, bundleID: bundleID, environment: environment,
            signedBy: key)
    }

    /// Closes the connections; sends in flight fail with ``APNsClientError/shutDown``.
    public func shutdown() async throws {
        for closed in keyring.close().flatMap({ $0.close() }) { try? await closed.get() }
    }

    /// One call to the channel-management host of `environment`, on the key's own connection to it.
    private func manageChannels(
        method: String, route: String, channelID: String?, body: Data?, bundleID: String, environment: APNsEnvironment,
        signedBy key: APNsSigningKey
    ) async throws(APNsClientError) -> APNsChannelAnswer {
        let endpoint = try channelsEndpoints[environment]!.get()
        try Self.checkBundleID(bundleID)
        let requestID = UUID()
        let path = endpoint.pathPrefix + "/1/apps/" + bundleID + route
        let metadata: Logger.Metadata = [
            "apns.channel_id": "\(channelID ?? "")", "apns.id": "\(Self.id(requestID))",
            "apns.push_type": "channels \(method) \(route)",
        ]
        let answer = try await exchange(signedBy: key, with: endpoint, metadata: metadata) { jwt in
            APNsWireRequest(
                headers: Self.channelHeaders(
                    method: method, path: path, channelID: channelID, bodyBytes: body?.count, requestID: requestID, jwt: jwt,
                    endpoint: endpoint),
                body: ByteBuffer(data: body ?? Data()))
        }
        return Self.channelAnswer(status: answer.status, headers: answer.headers, body: answer.body, asked: channelID)
    }

    /// Sends what `wire` builds on `key`'s connection to `endpoint`, signed with the key's current JWT; on 403
    /// `ExpiredProviderToken` signs a new one and sends once more, returning the second answer whatever it is.
    private func exchange(
        signedBy key: APNsSigningKey,
        with endpoint: APNsEndpoint,
        metadata: Logger.Metadata,
        _ wire: (_ jwt: String) -> APNsWireRequest
    ) async throws(APNsClientError) -> APNsWireAnswer {
        guard let lane = keyring.lane(for: key) else { throw .shutDown }
        let token = lane.tokens.token()
        let answer = try await perform(wire(token.jwt), endpoint: endpoint, on: lane.connection, metadata: metadata)
        guard answer.status == 403, Self.reason(in: answer.body) == "ExpiredProviderToken" else { return answer }
        let fresh = lane.tokens.replace(token)
        logger.debug(
            "APNs said the provider token expired; retrying with a new one",
            metadata: metadata.merging(
                ["apns.key_id": "\(key.keyID)", "apns.key_fingerprint": "\(key.fingerprint)"], uniquingKeysWith: { $1 }))
        return try await perform(wire(fresh.jwt), endpoint: endpoint, on: lane.connection, metadata: metadata)
    }

    /// Sends `wire` on its key's connection to `endpoint`. A request the server never processed (refused, above a
    /// GOAWAY's last stream, or never written before a close) goes again, on a new connection when the old one
    /// no longer takes requests; one that may have reached APNs is never sent twice by the client.
    private func perform(
        _ wire: APNsWireRequest,
        endpoint: APNsEndpoint,
        on connections: APNsKeyConnections,
        metadata: Logger.Metadata
    ) async throws(APNsClientError) -> APNsWireAnswer {
        let link = try connections.link(to: endpoint)
        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        var resends = 0
        while true {
            let outcome: APNsStreamOutcome
            do throws(APNsClientError) {
                if Task.isCancelled { throw .cancelled }
                outcome = await (try await link.connection()).send(wire, deadline: deadline)
            } catch {
                log(failure: error, metadata)
                throw error
            }
            switch outcome {
            case .answered(let answer):
                logger.debug(
                    "APNs answered",
                    metadata: metadata.merging(
                        ["apns.status": "\(answer.status)", "apns.reason": "\(Self.reason(in: answer.body) ?? "")"],
                        uniquingKeysWith: { $1 }))
                return answer
            case .notSent where resends < Self.maxResends && NIODeadline.now() < deadline:
                resends += 1
                logger.debug("APNs did not process the request; sending it again", metadata: metadata)
            case .notSent:
                let failure = APNsClientError.connectionClosed("the request was not processed in \(resends + 1) attempts")
                log(failure: failure, metadata)
                throw failure
            case .failed(let failure):
                log(failure: failure, metadata)
                throw failure
            }
        }
    }

    /// Times one request goes again after the server said it never processed it.
    static var maxResends: Int { 3 }

    private func log(failure: APNsClientError, _ metadata: Logger.Metadata) {
        logger.debug(
            "APNs send failed without an answer",
            metadata: metadata.merging(["error.code": "\(failure.code)"], uniquingKeysWith: { $1 }))
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
        // A device push echoes `apns-id`, a broadcast `apns-request-id` (with `apns-unique-id` in development).
        response.apnsID = (headers.first(name: "apns-id") ?? headers.first(name: "apns-request-id")).flatMap(UUID.init(uuidString:))
        response.uniqueID = headers.first(name: "apns-unique-id")
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

    /// The `reason` of an error body, if it has one.
    static func reason(in body: ByteBuffer) -> String? {
        guard body.readableBytes > 0 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["reason"] as? String
    }

    /// One endpoint per environment; a URL the client cannot use fails only the sends that need it.
    private static func endpoints(_ url: (APNsEnvironment) -> URL) -> [APNsEnvironment: Result<APNsEndpoint, APNsClientError>] {
        var endpoints: [APNsEnvironment: Result<APNsEndpoint, APNsClientError>] = [:]
        for environment in APNsEnvironment.allCases {
            endpoints[environment] = Result { () throws(APNsClientError) in try APNsEndpoint(url(environment)) }
        }
        return endpoints
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
