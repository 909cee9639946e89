import CremaAPNsProtocol
import CremaPostgres
import CremaRuntime
import CremaServer
import CremaService
import CremaSettings
import Foundation
import Logging

/// Start-up shared by the subcommands: configuration, logging and the database to use.
enum Runtime {
    /// `readsAPIKeys`: false for commands that serve no requests, so `CREMA_API_KEYS` cannot stop them.
    static func configuration(readsAPIKeys: Bool = true) throws -> CremaConfiguration {
        do {
            return try CremaConfiguration(environment: ProcessInfo.processInfo.environment, readsAPIKeys: readsAPIKeys)
        } catch {
            throw StartupError.configuration("\(error)")
        }
    }

    static func bootstrapLogging(level: String) -> Logger {
        let parsed = Logger.Level(rawValue: level.lowercased()) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = parsed
            return handler
        }
        return Logger(label: "crema")
    }

    /// The database to use: the configured one, or the embedded cluster (started if needed).
    static func database(_ configuration: CremaConfiguration, logger: Logger) async throws -> DatabaseChoice {
        switch configuration.database {
        case .conninfo(let conninfo):
            return DatabaseChoice(conninfo: conninfo, cluster: nil, startedCluster: false)
        case .embedded:
            let cluster = EmbeddedCluster(directory: configuration.embeddedDirectory.appendingPathComponent("postgres"), logger: logger)
            let (conninfo, started) = try await cluster.start()
            return DatabaseChoice(conninfo: conninfo, cluster: cluster, startedCluster: started)
        }
    }
}

extension Runtime {
    /// `CREMA_MASTER_KEY`, or on the private database of the embedded default one generated once and kept in
    /// `.crema/master-key` (mode 0600, beside the cluster, never inside it), so the demo can register webhooks and store
    /// `.p8` keys. A configured database without `CREMA_MASTER_KEY` gets none: those features answer 409 until it is set.
    static func masterKey(_ configuration: CremaConfiguration, privateDatabase: Bool) throws -> MasterKey? {
        if let key = configuration.masterKey { return key }
        guard privateDatabase else { return nil }
        let file = configuration.embeddedDirectory.appendingPathComponent("master-key")
        if FileManager.default.fileExists(atPath: file.path) {
            // Never replaced: a new key would leave every secret sealed with the old one unreadable.
            guard let text = try? String(contentsOf: file, encoding: .utf8), let key = try? MasterKey(base64: text) else {
                throw StartupError.configuration("\(file.path) is not a usable master key (base64 of 32 bytes); restore it, or set CREMA_MASTER_KEY")
            }
            return key
        }
        let text = Data([UInt8].random(count: 32)).base64EncodedString()
        // Created owner-only from the first byte, never world-readable in between.
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw StartupError(message: "cannot write \(file.path)") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data((text + "\n").utf8))
        return try MasterKey(base64: text)
    }
}

/// Which database a command uses, and whether it started the embedded cluster (then it stops it too;
/// a cluster another process started keeps running for that process).
struct DatabaseChoice {
    var conninfo: String
    var cluster: EmbeddedCluster?
    var startedCluster: Bool

    func stopClusterIfStartedHere() async throws {
        if startedCluster, let cluster {
            say("Stopping the private PostgreSQL cluster…")
            try await cluster.stop()
        }
    }
}

/// Writes a line to standard output at once: `print` is block-buffered when stdout is a file or pipe, and
/// start-up lines (keys, URL) must reach a log before the server runs for hours.
func say(_ line: String) {
    // A reader that went away (a closed pipe) loses the line; it must not stop crema (FileHandle.write(_:) traps).
    try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}
