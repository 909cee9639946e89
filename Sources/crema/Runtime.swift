import CremaPostgres
import CremaServer
import Foundation
import Logging

/// Start-up shared by the subcommands: configuration, logging and the database to use.
enum Runtime {
    static func configuration() throws -> CremaConfiguration {
        do {
            return try CremaConfiguration(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw RuntimeError(message: "\(error)")
        }
    }

    static func bootstrapLogging(level: String) -> Logger {
        let parsed = Logger.Level(rawValue: level.lowercased()) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = parsed
            return handler
        }
        return Logger(label: "crema")
    }

    /// The database to use: the configured one, or the embedded cluster (started if needed). The second
    /// value is the cluster when Crema runs it, so the caller can stop it on shutdown.
    static func database(_ configuration: CremaConfiguration, logger: Logger) async throws -> (conninfo: String, cluster: EmbeddedCluster?) {
        switch configuration.database {
        case .conninfo(let conninfo):
            return (conninfo, nil)
        case .embedded:
            let cluster = EmbeddedCluster(directory: configuration.embeddedDirectory.appendingPathComponent("postgres"), logger: logger)
            return (try await cluster.start(), cluster)
        }
    }
}

/// A start-up failure worth one clear line on the terminal.
struct RuntimeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
