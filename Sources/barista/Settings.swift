import Foundation

/// Where a setting came from, highest precedence first: a flag, the environment, the config file, the default.
enum SettingSource: String, Codable, Sendable {
    case flag, environment, file
    case `default`
}

struct Setting: Codable, Sendable {
    var value: String
    var source: SettingSource
}

/// `barista`'s effective configuration: flags > environment > config file > defaults.
///
/// | setting | flag | environment | config file key | default |
/// |---|---|---|---|---|
/// | server | `--server` | `CREMA_SERVER` | `server` | `http://127.0.0.1:8080` |
/// | key | (none: keys stay out of `ps`) | `CREMA_BARISTA_KEY` | `key` | none (required) |
/// | store | `--store` | `CREMA_STORE` | `store` | none (needed for `queue` and order numbers) |
/// | name | `--name` | `CREMA_BARISTA_NAME` | `name` | `$USER` |
///
/// The file is `$BARISTA_CONFIG`, else `$XDG_CONFIG_HOME/barista/config`, else `~/.config/barista/config`:
/// `key = value` lines, `#` comments; a missing file is fine.
struct Settings: Sendable {
    static let defaultServer = "http://127.0.0.1:8080"
    static let fileKeys: Set<String> = ["server", "key", "store", "name"]

    var server: Setting
    var key: Setting?
    var store: Setting?
    var name: Setting
    /// The config file consulted, and whether it existed.
    var configFile: String
    var configFileExists: Bool

    /// Resolves every setting. Pure apart from reading the config file, so tests can pass their own environment.
    static func resolve(
        server serverFlag: String?, store storeFlag: String?, name nameFlag: String?, environment: [String: String]
    ) throws(BaristaError) -> Settings {
        let path = configPath(environment: environment)
        var file: [String: String] = [:]
        var exists = false
        if FileManager.default.fileExists(atPath: path) {
            exists = true
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw BaristaError(.configuration, "Cannot read the config file \(path): check its permissions.")
            }
            file = try parseConfig(text, path: path)
        }

        func pick(_ flag: String?, _ variable: String, _ fileKey: String) -> Setting? {
            if let flag, !flag.isEmpty { return Setting(value: flag, source: .flag) }
            if let value = environment[variable], !value.isEmpty { return Setting(value: value, source: .environment) }
            if let value = file[fileKey], !value.isEmpty { return Setting(value: value, source: .file) }
            return nil
        }

        var server = pick(serverFlag, "CREMA_SERVER", "server") ?? Setting(value: defaultServer, source: .default)
        server.value = try normalizeServer(server.value)
        let user = environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "barista"
        return Settings(
            server: server,
            key: pick(nil, "CREMA_BARISTA_KEY", "key"),
            store: pick(storeFlag, "CREMA_STORE", "store"),
            name: pick(nameFlag, "CREMA_BARISTA_NAME", "name") ?? Setting(value: user, source: .default),
            configFile: path, configFileExists: exists)
    }

    static func configPath(environment: [String: String]) -> String {
        if let explicit = environment["BARISTA_CONFIG"], !explicit.isEmpty { return explicit }
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty { return xdg + "/barista/config" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/barista/config"
    }

    /// `key = value` lines; blank lines and `#` comments are skipped; values may be quoted.
    static func parseConfig(_ text: String, path: String) throws(BaristaError) -> [String: String] {
        var values: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw BaristaError(.configuration, "\(path):\(index + 1): expected 'key = value'; fix or remove the line.")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            guard fileKeys.contains(key) else {
                let known = fileKeys.sorted().joined(separator: ", ")
                throw BaristaError(.configuration, "\(path):\(index + 1): unknown setting '\(key)'; known: \(known).")
            }
            values[key] = value
        }
        return values
    }

    /// `host:port` gets `http://`; a trailing slash is dropped; anything but http(s) is a usage error.
    static func normalizeServer(_ text: String) throws(BaristaError) -> String {
        var value = text.trimmingCharacters(in: .whitespaces)
        if !value.contains("://") { value = "http://" + value }
        while value.hasSuffix("/") { value.removeLast() }
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw BaristaError(.usage, "'\(text)' is not a server URL: use e.g. --server http://127.0.0.1:8080.")
        }
        return value
    }

    /// The key for display: never more than its last four characters.
    static func mask(_ key: String) -> String {
        key.count <= 8 ? "****" : "****" + key.suffix(4)
    }

    /// The key, or a one-line error that says where to put it.
    func requireKey() throws(BaristaError) -> String {
        guard let key else {
            throw BaristaError(
                .configuration,
                "No barista key: set CREMA_BARISTA_KEY (crema serve prints it) or add 'key = …' to \(configFile).")
        }
        return key.value
    }

    /// The store, or a one-line error; `why` completes "needs a store: …".
    func requireStore(for why: String) throws(BaristaError) -> String {
        guard let store else {
            throw BaristaError(.usage, "\(why) needs a store: pass --store, set CREMA_STORE, or add 'store = …' to \(configFile).")
        }
        return store.value
    }
}
