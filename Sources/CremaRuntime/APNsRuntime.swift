public import CremaAPNs
public import CremaAPNsKey
public import CremaAPNsSimulator
public import CremaClock
import CremaCore
public import CremaDelivery
public import CremaService
public import CremaSettings
public import CremaStore
public import Foundation
public import Logging

/// The APNs client a process sends with, and the in-process simulator behind it when no Apple key is
/// configured (docs/design.md §7's embedded default).
public struct APNsRuntime: Sendable {
    public var client: APNsClient
    /// The one key this process signs with (the dispatcher passes it to every send until apps carry their own).
    public var signingKey: APNsSigningKey
    public var simulator: APNsSimulator?
    public var bundleID: String

    /// A client the caller opened (a test's, against its own simulator): `service` closes it, and `simulator` if given.
    public init(client: APNsClient, signingKey: APNsSigningKey, simulator: APNsSimulator?, bundleID: String) {
        self.client = client
        self.signingKey = signingKey
        self.simulator = simulator
        self.bundleID = bundleID
    }

    /// The simulator's key is generated per start: only this process signs for it, so nothing is kept.
    public static let simulatorKeyID = "CREMASIM01"
    public static let simulatorTeamID = "CREMATEAM1"

    public static func start(_ settings: APNsSettings, dataDirectory: URL, clock: CremaClock, logger: Logger) async throws -> APNsRuntime {
        switch settings {
        case .simulator(let bundleID):
            let key = APNsSigningKey.generate(keyID: simulatorKeyID, teamID: simulatorTeamID)
            let directory = dataDirectory.appendingPathComponent("apns-sim")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var configuration = APNsSimulatorConfiguration(
                directory: directory.path, keys: [APNsSimulatorKey(keyID: key.keyID, teamID: key.teamID, publicKeyPEM: key.publicKeyPEM)],
                // Any app's topic: tenants add apps while it runs (Apple checks each token's topic; this stands in).
                bundleIDs: [], clock: clock)
            configuration.startsNeedCollapseID = true
            // Where it listens changes each start; serve publishes it in apns-sim/url once it listens (SimulatorURLFile).
            let simulator = try await APNsSimulator.start(configuration, logger: logger)
            let client = try APNsClient(
                configuration: .singleServer(simulator.baseURL, extraTrustRootsPEMFile: simulator.caFile), logger: logger, clock: clock)
            return APNsRuntime(client: client, signingKey: key, simulator: simulator, bundleID: bundleID)
        case .apple(let keyFile, let keyID, let teamID, let bundleID, let url, let caFile, let broadcastURL, let channelsURL):
            let key: APNsSigningKey
            do {
                key = try APNsSigningKey(contentsOf: keyFile, keyID: keyID, teamID: teamID)
            } catch {
                throw StartupError.configuration("CREMA_APNS_KEY_FILE \(keyFile): \(error)")
            }
            var configuration = url.map { APNsClientConfiguration.singleServer($0, extraTrustRootsPEMFile: caFile) }
                ?? APNsClientConfiguration(extraTrustRootsPEMFile: caFile)
            if let broadcastURL { configuration.sendBroadcasts(to: broadcastURL) }
            if let channelsURL { configuration.manageChannels(at: channelsURL) }
            return APNsRuntime(
                client: try APNsClient(configuration: configuration, logger: logger, clock: clock), signingKey: key, simulator: nil, bundleID: bundleID)
        }
    }

    /// Which keys this process signs with (docs/tenants.md). With a configured key: that key for the default
    /// app and every app's active key from the database. With the built-in simulator and the private embedded
    /// database: the simulator's key for every app without one, and the database's keys, which the simulator is
    /// told to trust as Apple would. With the built-in simulator and a shared database: nothing at all, so this
    /// instance leaves the outbox to one that can reach APNs instead of sending it to its private simulator.
    public func keyring(
        database: APNsKeyRepository, masterKey: MasterKey?, privateDatabase: Bool, clock: CremaClock, logger: Logger
    ) -> SigningKeyring {
        guard let simulator else {
            return SigningKeyring(repository: database, masterKey: masterKey, configured: [bundleID: signingKey], logger: logger, clock: clock)
        }
        guard privateDatabase else { return SigningKeyring(repository: nil, masterKey: nil, logger: logger, clock: clock) }
        return SigningKeyring(repository: database, masterKey: masterKey, fallback: signingKey, logger: logger, clock: clock, onLoad: { key in
            try? simulator.trust(APNsSimulatorKey(keyID: key.keyID, teamID: key.teamID, publicKeyPEM: key.publicKeyPEM))
        })
    }

    /// `apns-sim/url` for this process's simulator, on the private embedded database only: a serve on a shared
    /// database sends it nothing, so scripts must not find it there.
    public func simulatorURLFile(dataDirectory: URL, privateDatabase: Bool) -> SimulatorURLFile? {
        guard let simulator, privateDatabase else { return nil }
        return SimulatorURLFile(directory: dataDirectory, url: simulator.baseURL)
    }

    /// One line for the terminal saying where pushes go.
    public func summary(privateDatabase: Bool) -> String {
        if let simulator {
            guard privateDatabase else {
                return "APNs: no Apple key configured and the database is shared: this instance sends no pushes "
                    + "(set CREMA_APNS_KEY_FILE, CREMA_APNS_KEY_ID, CREMA_APNS_TEAM_ID and CREMA_APNS_TOPIC to send)"
            }
            return "APNs: no Apple key configured; delivering to the built-in simulator at \(simulator.baseURL.absoluteString) "
                + "(requests: \(simulator.baseURL.absoluteString)/sim/requests; URL saved in apns-sim/url once listening)"
        }
        return "APNs: delivering with the configured key (topic \(bundleID)) and each app's active key from the database"
    }

    /// Closes the client and the simulator when the process's service group stops (list it before the dispatcher).
    public var service: APNsService { APNsService(client: client, simulator: simulator) }
}
