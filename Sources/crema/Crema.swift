import ArgumentParser
import Foundation

/// The `crema` command: the broker's server and its operational tools.
@main
struct Crema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crema",
        abstract: "Crema, a Live Activity state broker for coffee orders.",
        discussion: """
            Configuration comes from the environment (docs/design.md §9): CREMA_DATABASE_URL (libpq conninfo or URI; \
            libpq's PG* variables are honoured too), CREMA_HTTP_HOST, CREMA_HTTP_PORT, CREMA_API_KEYS \
            (role:key pairs of the tenant 'default'), CREMA_ADMIN_KEY (the bootstrap admin key), CREMA_MASTER_KEY \
            (base64 of 32 random bytes; seals .p8 keys stored in the database), CREMA_DATA_DIR (embedded cluster folder, default .crema), LOG_LEVEL, and for \
            delivery CREMA_APNS_KEY_FILE, CREMA_APNS_KEY_ID, CREMA_APNS_TEAM_ID, CREMA_APNS_TOPIC (bundle ID), \
            CREMA_APNS_URL (default: Apple's hosts by token environment) and CREMA_APNS_CA_FILE.
            With no database configured, Crema runs its own private PostgreSQL cluster under .crema/.
            """,
        version: CremaVersion.current,
        subcommands: [Serve.self, Dispatch.self, Migrate.self, Admin.self, Postgres.self, APNsSim.self],
        defaultSubcommand: Serve.self)

    /// ArgumentParser's own `main`, except that a `RuntimeError` is one line on standard error and its own exit
    /// status (78 for configuration), never a usage dump or a backtrace.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as RuntimeError {
            FileHandle.standardError.write(Data("crema: \(error.message)\n".utf8))
            Foundation.exit(error.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}
