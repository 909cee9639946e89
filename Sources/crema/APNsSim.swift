import ArgumentParser
import CremaAPNs
import CremaAPNsKey
import CremaAPNsSimulator
import CremaClock
import CremaRuntime
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

extension Crema {
    /// `crema apns-sim`: run the APNs simulator on its own, for demos, benchmarks and the docker-compose stack.
    struct APNsSim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apns-sim",
            abstract:
                "Run an APNs-compatible server (HTTP/2 + TLS) that validates, records and fails pushes on request.",
            discussion: """
                The simulator answers POST /3/device/<token> exactly as APNs would (status and reason), checking the \
                JWT, headers, topic suffixes and Live Activity / widget / alert payload rules, and records every \
                request. It writes a self-signed certificate to --dir/ca.pem (trust it with CREMA_APNS_CA_FILE).
                It also speaks broadcast: channel management (/1/apps/<bundle>/channels, .../all-channels) and \
                POST /4/broadcasts/apps/<bundle>, with Apple's checks and reasons (docs/apns.md §5.6).

                Without --key-file it creates (or reuses) a signing key --dir/AuthKey_<KEY-ID>.p8 and prints the \
                environment lines that point `crema serve` at it.

                Several apps and teams: repeat --key TEAM-ID:KEY-ID[:PATH.p8] for more accepted keys (each signs \
                only for its team; without a path the key is created or reused in --dir like the first one), and \
                repeat --bundle-id for each app. The first --bundle-id is the one printed as CREMA_APNS_TOPIC.

                Control API on the same port, no JWT, HTTP/1.1 or HTTP/2:
                  GET    /sim/health
                  GET    /sim/requests[?token=<hex>|?channel=<id>]   (oldest first)
                  GET    /sim/channels   (every app's broadcast channels)
                  DELETE /sim/requests
                  GET    /sim/faults
                  POST   /sim/faults   (one fault as JSON, see below)
                  DELETE /sim/faults
                  POST   /sim/release   (answer every request a hold fault holds)
                Faults ("since" is ms since 1970, like APNs' timestamp):
                  {"type":"unregistered","token":"<hex>","since":1732250000000}
                  {"type":"status","status":503,"reason":"ServiceUnavailable",
                   "retry_after":30,"count":3,"token":"<hex or omit for any>"}
                  {"type":"latency","milliseconds":2000,"count":1,"token":"<hex or omit for any>"}
                  {"type":"hold","count":1,"token":"<hex or omit for any>"}   (until POST /sim/release)
                  {"type":"drop_connection","count":1}
                  {"type":"goaway","count":1}   (answer, then GOAWAY and close the connection)
                  {"type":"forget_channel","channel":"<id>"}   (APNs lost the channel)
                  {"type":"broadcast_status","status":429,"reason":"TooManyRequests",
                   "retry_after":5,"count":1,"channel":"<id or omit for any>"}
                  {"type":"feature_not_enabled","bundle_id":"<bundle>"}   (until DELETE /sim/faults)
                Example:
                  curl --cacert .crema/apns-sim/ca.pem \\
                    https://127.0.0.1:2197/sim/requests

                Runs until SIGINT or SIGTERM. LOG_LEVEL=debug logs every answer.
                """)

        @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
        @Option(help: "Port to listen on (0 picks a free one).") var port: Int = 2197
        @Option(help: "Folder for ca.pem, key.pem and a generated AuthKey_<KEY-ID>.p8.") var dir: String =
            ".crema/apns-sim"
        @Option(help: "Team ID that JWTs must carry as iss.") var teamID: String = "CREMATEAM1"
        @Option(help: "Key ID that JWTs must carry as kid.") var keyID: String = "CREMAKEY01"
        @Option(help: "A .p8 signing key whose public key to accept (default: generate one in --dir).") var keyFile:
            String?
        @Option(
            help: ArgumentHelp(
                "A further key to accept, as TEAM-ID:KEY-ID or TEAM-ID:KEY-ID:PATH.p8 (repeatable).",
                valueName: "team:key[:file]"))
        var key: [String] = []
        @Option(help: "A bundle ID topics may use, plus the push type's suffix (repeatable); any topic when absent.")
        var bundleID: [String] = []

        func run() async throws {
            let level =
                Logger.Level(rawValue: (ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "info").lowercased())
                ?? .info
            let logger = Runtime.bootstrapLogging(level: level.rawValue)

            let (key, keyPath) = try signingKey(keyID: keyID, teamID: teamID, file: keyFile)
            var extras: [(APNsSigningKey, String?)] = []
            for spec in self.key { extras.append(try signingKey(spec)) }
            let accepted = ([key] + extras.map(\.0)).map {
                APNsSimulatorKey(keyID: $0.keyID, teamID: $0.teamID, publicKeyPEM: $0.publicKeyPEM)
            }
            let simulator = try await APNsSimulator.start(
                APNsSimulatorConfiguration(
                    host: host, port: port, directory: dir, keys: accepted, bundleIDs: Set(bundleID), clock: .system),
                logger: logger)

            say("APNs simulator listening on \(simulator.baseURL.absoluteString) (Ctrl-C to stop)")
            say("Point crema serve at it with:")
            say("export CREMA_APNS_URL=\(simulator.baseURL.absoluteString)")
            say("export CREMA_APNS_CA_FILE=\(Self.absolute(simulator.caFile))")
            if let keyPath { say("export CREMA_APNS_KEY_FILE=\(Self.absolute(keyPath))") }
            say("export CREMA_APNS_KEY_ID=\(keyID)")
            say("export CREMA_APNS_TEAM_ID=\(teamID)")
            say("export CREMA_APNS_TOPIC=\(bundleID.first ?? "com.example.crema")")
            for (extra, path) in extras {
                let file = path.map { " (\(Self.absolute($0)))" } ?? ""
                say("# also accepts key \(extra.keyID) of team \(extra.teamID)\(file)")
            }
            if bundleID.count > 1 { say("# topics of: \(bundleID.joined(separator: ", "))") }

            let group = ServiceGroup(
                services: [APNsService(client: nil, simulator: simulator)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger)
            try await group.run()
            say("APNs simulator stopped.")
        }

        /// A `--key TEAM-ID:KEY-ID[:PATH]` value as a key.
        private func signingKey(_ spec: String) throws -> (APNsSigningKey, String?) {
            let parts = spec.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw StartupError(message: "--key \(spec): expected TEAM-ID:KEY-ID or TEAM-ID:KEY-ID:PATH.p8")
            }
            return try signingKey(keyID: parts[1], teamID: parts[0], file: parts.count == 3 ? parts[2] : nil)
        }

        /// The key to accept: `file`, or the one this command generated in `--dir` (created on first run,
        /// reused after so exported variables stay valid). The path is nil when the user supplied the key.
        private func signingKey(
            keyID: String, teamID: String, file keyFile: String?
        ) throws -> (APNsSigningKey, String?) {
            do {
                if let keyFile {
                    return (try APNsSigningKey(contentsOf: keyFile, keyID: keyID, teamID: teamID), nil)
                }
                let path = URL(fileURLWithPath: dir).appendingPathComponent("AuthKey_\(keyID).p8").path
                if FileManager.default.fileExists(atPath: path) {
                    return (try APNsSigningKey(contentsOf: path, keyID: keyID, teamID: teamID), path)
                }
                let key = APNsSigningKey.generate(keyID: keyID, teamID: teamID)
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                guard
                    FileManager.default.createFile(
                        atPath: path, contents: Data(key.pkcs8PEM.utf8), attributes: [.posixPermissions: 0o600])
                else {
                    throw StartupError(message: "cannot write \(path)")
                }
                return (key, path)
            } catch let error as APNsSigningKeyError {
                throw StartupError(message: error.description)
            }
        }

        private static func absolute(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.path
        }
    }
}
