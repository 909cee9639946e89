import ArgumentParser

/// `barista`: the baristas' terminal for Crema's order queue.
@main
struct Barista: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "barista",
        abstract: "See the order queue and move orders on, from the terminal next to the espresso machine.",
        // Indented lines are kept under 80 columns with their own line breaks: ArgumentParser wraps a long line at
        // column 0, which tore the indented blocks apart (issue #48).
        discussion: """
            <order> is the number on the cup (42 or #42, within the store) or the order's full id.

            Every change reads the order first and sends the version it saw (expected_version) with a fresh \
            Idempotency-Key: if a colleague changed the order in between, nothing is applied and barista says \
            what changed and what you can do now. Running the same command again is safe: it is checked \
            against the order as it is then (a second 'ready' is refused, not applied twice).

            CONFIGURATION (flags > environment > config file > default)
              server  --server   CREMA_SERVER        default http://127.0.0.1:8080
              key                CREMA_BARISTA_KEY   the barista key (required)
              store   --store    CREMA_STORE         needed for 'queue' and order numbers
              name    --name     CREMA_BARISTA_NAME  who 'start' records; default $USER
              The config file is $BARISTA_CONFIG, else $XDG_CONFIG_HOME/barista/config,
              else ~/.config/barista/config, with 'key = value' lines (server, key,
              store, name) and # comments. 'barista config' prints the effective settings.

            OUTPUT
              Tables on a terminal (colored unless NO_COLOR is set), plain text when
              piped, --json for scripts (one JSON object per line; errors also as
              {"error":{…}} on stdout). Errors are one line on stderr.

            EXIT CODES
            \(ExitStatus.helpTable)
            """,
        version: "1.0.0",
        subcommands: [
            Queue.self, Start.self, Ready.self, Handoff.self, Delay.self, Cancel.self, Show.self, Config.self,
        ]
    )
}
