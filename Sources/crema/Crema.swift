import ArgumentParser
import CremaRuntime
import CremaServer
import CremaSettings
import Foundation

/// The `crema` command: the broker's server and its operational tools.
@main
struct Crema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crema",
        abstract: "Crema, a Live Activity state broker for coffee orders.",
        discussion: "Configuration comes from the environment (docs/operations.md). With no database configured, Crema runs "
            + "its own private PostgreSQL cluster under .crema/.\n\n" + ConfigurationVariables.helpText,
        version: CremaVersion.current,
        subcommands: [Serve.self, Dispatch.self, Migrate.self, Admin.self, Postgres.self, APNsSim.self],
        defaultSubcommand: Serve.self)

    /// ArgumentParser's own `main`, except that a `StartupError` is one line on standard error and its own exit
    /// status (78 for configuration), never a usage dump or a backtrace.
    static func main() async {
        // A closed log pipe (`scripts/run | tee log`, then Ctrl-C, which ends tee too) must not stop crema before it
        // stops its private cluster: a write to it fails with EPIPE and is dropped (`say`). SwiftNIO ignores SIGPIPE too,
        // but only once it opens its first socket; this holds from the first line.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as StartupError {
            try? FileHandle.standardError.write(contentsOf: Data("crema: \(error.message)\n".utf8))
            Foundation.exit(error.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}
