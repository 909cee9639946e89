import ArgumentParser

/// The `crema` command: the broker's server and its operational tools.
@main
struct Crema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crema",
        abstract: "Crema, a Live Activity state broker for coffee orders.",
        discussion: """
            Configuration comes from the environment (DESIGN §9): CREMA_DATABASE_URL (libpq conninfo or URI; \
            libpq's PG* variables are honoured too), CREMA_HTTP_HOST, CREMA_HTTP_PORT, CREMA_API_KEYS \
            (role:key pairs), CREMA_DATA_DIR (embedded cluster folder, default .crema), LOG_LEVEL.
            With no database configured, Crema runs its own private PostgreSQL cluster under .crema/.
            """,
        subcommands: [Serve.self, Migrate.self, Postgres.self, APNsSim.self],
        defaultSubcommand: Serve.self)
}
