import ArgumentParser
import CremaPostgres
import Foundation

extension Crema {
    /// `crema postgres`: manage a private PostgreSQL cluster (the one `serve` uses, or one for tests).
    struct Postgres: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "postgres",
            abstract: "Start, stop or inspect a private PostgreSQL cluster in a folder.",
            subcommands: [Start.self, Stop.self, Status.self, Promote.self])

        struct Options: ParsableArguments {
            @Option(help: "The cluster's folder.") var dir: String = ".crema/postgres"
            @Option(help: "The database to create and print.") var database: String = "crema"
            @Option(
                name: .customLong("standby-of"),
                help: "Make the cluster a hot standby of the running private cluster in this folder (pg_basebackup, streaming).")
            var standbyOf: String?
            @Option(help: "max_connections of a server this call starts (a running one keeps its own).")
            var maxConnections: Int = EmbeddedCluster.defaultMaxConnections

            var cluster: EmbeddedCluster {
                EmbeddedCluster(
                    directory: URL(fileURLWithPath: dir), database: database, standbyOf: standbyOf.map { URL(fileURLWithPath: $0) },
                    maxConnections: maxConnections)
            }
        }

        struct Start: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Create (if needed) and start the cluster; print its conninfo.")
            @OptionGroup var options: Options
            func run() async throws { say(try await options.cluster.start().conninfo) }
        }

        struct Stop: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop the cluster (fast shutdown).")
            @OptionGroup var options: Options
            func run() async throws { try await options.cluster.stop() }
        }

        struct Promote: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Promote a standby made with --standby-of to a primary that takes writes.")
            @OptionGroup var options: Options
            func run() async throws { try await options.cluster.promote() }
        }

        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Exit 0 and print the conninfo when running, exit 3 otherwise.")
            @OptionGroup var options: Options
            func run() async throws {
                guard try await options.cluster.isRunning() else { throw ExitCode(3) }
                say(options.cluster.conninfo)
            }
        }
    }
}
