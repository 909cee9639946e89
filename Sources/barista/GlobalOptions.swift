import ArgumentParser
import Foundation

/// The options every subcommand takes. Optional without defaults, so an unset flag falls through to the
/// environment and the config file (see ``Settings``).
struct GlobalOptions: ParsableArguments {
    @Option(help: "Crema's URL (overrides CREMA_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(help: "The store whose order numbers you use (overrides CREMA_STORE).")
    var store: String?

    @Flag(help: "Print machine-readable JSON (one object per line) instead of tables.")
    var json = false

    func settings(name: String? = nil) throws(BaristaError) -> Settings {
        try Settings.resolve(server: server, store: store, name: name, environment: ProcessInfo.processInfo.environment)
    }
}
