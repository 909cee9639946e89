import ArgumentParser
import Foundation

extension Barista {
    struct Config: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the effective settings and where each comes from (the key masked).",
            discussion: """
                Precedence: flags > environment > config file > default. Example config file \
                (~/.config/barista/config; keep it mode 600, it holds the key):
                  server = http://10.0.0.5:8080
                  store = market-st
                  key = <the barista key>
                  name = Sam
                """)

        @Option(help: "Who 'start' records (overrides CREMA_BARISTA_NAME).") var name: String?
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let terminal = Terminal.current
            let settings: Settings
            switch Result(catching: { () throws(BaristaError) -> Settings in try options.settings(name: name) }) {
            case .success(let resolved): settings = resolved
            case .failure(let error): try Runner.fail(error, json: options.json, terminal: terminal)
            }
            let masked = settings.key.map { Setting(value: Settings.mask($0.value), source: $0.source) }
            if options.json {
                try terminal.json(
                    ConfigOutput(
                        server: settings.server, store: settings.store, key: masked, name: settings.name,
                        configFile: settings.configFile, configFileExists: settings.configFileExists))
                return
            }
            var table = Table(header: ["SETTING", "VALUE", "FROM"])
            table.rows.append(["server", settings.server.value, settings.server.source.rawValue])
            table.rows.append(["store", settings.store?.value ?? "(none)", settings.store?.source.rawValue ?? "-"])
            table.rows.append(["key", masked?.value ?? "(none: set CREMA_BARISTA_KEY)", masked?.source.rawValue ?? "-"])
            table.rows.append(["name", settings.name.value, settings.name.source.rawValue])
            table.render(terminal: terminal).forEach { terminal.line($0) }
            terminal.line("config file: \(settings.configFile)\(settings.configFileExists ? "" : " (not present)")")
        }
    }
}

/// `config --json`: each setting as `{"value","source"}` (null when unset); the key is masked.
struct ConfigOutput: Encodable {
    var server: Setting
    var store: Setting?
    var key: Setting?
    var name: Setting
    var configFile: String
    var configFileExists: Bool

    enum CodingKeys: String, CodingKey {
        case server, store, key, name
        case configFile = "config_file", configFileExists = "config_file_exists"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(server, forKey: .server)
        try c.encode(store, forKey: .store)
        try c.encode(key, forKey: .key)
        try c.encode(name, forKey: .name)
        try c.encode(configFile, forKey: .configFile)
        try c.encode(configFileExists, forKey: .configFileExists)
    }
}
