import CremaAPNsKey
import CremaAPNsProtocol
import AsyncHTTPClient
import CremaAPNsSimulator
import CremaCore
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import Synchronization

@testable import CremaAPNs
import CremaClock

/// A simulator on 127.0.0.1 (port 0) with its own certificate folder and one accepted signing key, plus
/// helpers to build clients and raw requests against it. Everything is torn down by ``with(_:)``.
struct Harness {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let bundleID = "com.example.crema"

    let simulator: APNsSimulator
    let key: APNsSigningKey
    let directory: String
    let logger: Logger

    /// `otherKeys` are accepted beside ``key`` (each for its own team); `bundleIDs` are the apps topics may name;
    /// `maxChannelsPerApp` is the simulator's broadcast-channel limit.
    static func with(
        bundleIDs: Set<String> = [Harness.bundleID],
        otherKeys: [APNsSigningKey] = [],
        maxChannelsPerApp: Int = 10_000,
        _ body: (Harness) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("crema-apns-tests-\(UUID().uuidString)").path
        let key = APNsSigningKey.generate(keyID: keyID, teamID: teamID)
        var logger = Logger(label: "crema.apns.tests")
        logger.logLevel = .critical
        let simulator = try await APNsSimulator.start(
            APNsSimulatorConfiguration(
                directory: directory, keys: ([key] + otherKeys).map(Self.accepted), bundleIDs: bundleIDs,
                maxChannelsPerApp: maxChannelsPerApp, clock: .system),
            logger: logger)
        let harness = Harness(simulator: simulator, key: key, directory: directory, logger: logger)
        do {
            try await body(harness)
        } catch {
            try? await simulator.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        try await simulator.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A client pointed at the simulator, trusting its CA; `body` is awaited and the client shut down after.
    @discardableResult
    func withClient<T>(
        trustCA: Bool = true,
        tokenLifetime: Duration = .seconds(50 * 60),
        requestTimeout: Duration = .seconds(60),
        retriesFailedConnections: Bool = true,
        now: @escaping @Sendable () -> Date = { Date() },
        configure: (inout APNsClientConfiguration) -> Void = { _ in },
        _ body: (APNsClient) async throws -> T
    ) async throws -> T {
        var configuration = APNsClientConfiguration.singleServer(
            simulator.baseURL, extraTrustRootsPEMFile: trustCA ? simulator.caFile : nil)
        configure(&configuration)
        configuration.requestTimeout = requestTimeout
        configuration.tokenLifetime = tokenLifetime
        // A loaded test machine can take seconds to connect to the in-process simulator; 5 s is for Apple's servers.
        configuration.connectTimeout = .seconds(60)
        configuration.retriesFailedConnections = retriesFailedConnections
        let client = try APNsClient(configuration: configuration, logger: logger, clock: CremaClock(now: now, sleep: { try await CremaClock.system.sleep(for: $0) }))
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// A plain AsyncHTTPClient trusting the simulator, for requests the typed client cannot produce.
    @discardableResult
    func withRawClient<T>(http1Only: Bool = false, _ body: (HTTPClient) async throws -> T) async throws -> T {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(simulator.caFile)]
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        // The whole suite's simulators start TLS at once on two cores: the default 10 s to connect was seen to run out.
        configuration.timeout.connect = .seconds(60)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// A freshly signed provider token for raw requests.
    func jwt(key: APNsSigningKey? = nil, issuedAt: Date = Date()) -> String {
        ProviderTokenCache(key: key ?? self.key, lifetime: .seconds(3000), now: { issuedAt }).token().jwt
    }

    /// Sends a raw request and returns status, reason and headers.
    func raw(
        _ client: HTTPClient, method: HTTPMethod = .POST, path: String, headers: [(String, String)], body: Data?
    ) async throws -> (status: Int, reason: String?, headers: HTTPHeaders, body: ByteBuffer) {
        var request = HTTPClientRequest(url: simulator.baseURL.absoluteString + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        let response = try await client.execute(request, timeout: .seconds(20))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        let reason =
            (try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any])?["reason"] as? String
        return (Int(response.status.code), reason, response.headers, bytes)
    }

    // MARK: - Fixtures

    /// How the simulator is told to accept `key`.
    static func accepted(_ key: APNsSigningKey) -> APNsSimulatorKey {
        APNsSimulatorKey(keyID: key.keyID, teamID: key.teamID, publicKeyPEM: key.publicKeyPEM)
    }

    static func randomToken(bytes: Int = 32) -> String {
        (0..<bytes).map { _ in UInt8.random(in: 0...255) }.hexEncoded
    }

    static func body(_ pushType: APNsPushType, event: String = "update") -> Data {
        switch pushType {
        case .liveactivity where event == "start":
            Data(
                #"{"aps":{"timestamp":1732250000,"event":"start","content-state":{"status":"queued"},"attributes-type":"OrderActivityAttributes","attributes":{"number":42},"alert":{"title":"Order placed","body":"We're on it"},"input-push-token":1}}"#
                    .utf8)
        case .liveactivity:
            Data(
                #"{"aps":{"timestamp":1732250000,"event":"\#(event)","content-state":{"status":"preparing"},"stale-date":1732251000}}"#
                    .utf8)
        case .alert:
            Data(#"{"aps":{"alert":{"title":"Your order is ready","body":"Pick it up at the counter"}}}"#.utf8)
        case .widgets:
            Data(#"{"aps":{"content-changed":true}}"#.utf8)
        }
    }

    /// A Live Activity update or end as a broadcast carries it.
    static func broadcastBody(event: String = "update", padding: Int = 0) -> Data {
        Data(
            #"{"aps":{"timestamp":1732250000,"event":"\#(event)","content-state":{"nowServing":[41,42],"note":"\#(String(repeating: "x", count: padding))"}}}"#
                .utf8)
    }

    static func broadcast(
        channelID: String, bundleID: String = Harness.bundleID, priority: Int = 10, expiration: Date? = nil,
        body: Data = broadcastBody()
    ) -> APNsBroadcastRequest {
        APNsBroadcastRequest(
            channelID: channelID, environment: .sandbox, bundleID: bundleID, priority: priority, expiration: expiration,
            requestID: UUID(), body: body)
    }

    static func request(
        _ pushType: APNsPushType, token: String = randomToken(), priority: Int? = nil, expiration: Date? = nil,
        collapseID: String? = nil, event: String = "update", bundleID: String = Harness.bundleID
    ) -> APNsRequest {
        APNsRequest(
            deviceToken: token, environment: .sandbox, pushType: pushType, topic: pushType.topic(bundleID: bundleID),
            priority: priority, expiration: expiration, collapseID: collapseID, apnsID: UUID(),
            body: body(pushType, event: event))
    }
}

/// A clock that reads two hours behind for its first `staleReadings` readings and correct afterwards: the first
/// provider token is signed with an `iat` APNs considers expired, as after a long suspension of the process. A
/// client's first send reads it twice (the key's use, then the token's `iat`).
final class StaleFirstClock: Sendable {
    private let readings = Mutex(0)
    private let staleReadings: Int

    init(staleReadings: Int = 2) { self.staleReadings = staleReadings }

    func now() -> Date {
        let reading = readings.withLock { count in
            count += 1
            return count
        }
        return reading <= staleReadings ? Date().addingTimeInterval(-2 * 3600) : Date()
    }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) { current = Mutex(start) }

    func now() -> Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
