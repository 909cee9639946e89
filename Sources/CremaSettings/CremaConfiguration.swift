public import CremaCore
public import CremaCredentials
public import Foundation

/// Everything `crema serve` is configured with, read from the environment names fixed in docs/design.md §9.
public struct CremaConfiguration: Sendable {
    /// Where the database is; `.embedded` runs a private cluster under `embeddedDirectory`.
    public enum Database: Sendable, Equatable {
        /// A libpq conninfo string or URI; "" means "libpq's own `PG*` variables".
        case conninfo(String)
        case embedded
    }

    public var database: Database
    /// `CREMA_DATABASE_READ_URL`: a standby for the reads that may come from one (docs/operations.md, "Reads from a
    /// standby"); nil: every read on the primary.
    public var readDatabaseURL: String?
    public var embeddedDirectory: URL
    public var host: String
    public var port: Int
    /// Bearer keys and the role each grants; empty means "generate keys" in the embedded default.
    public var apiKeys: APIKeys
    public var poolSize: Int
    public var logLevel: String
    /// Where pushes go; `.simulator` runs the built-in APNs simulator in-process.
    public var apns: APNsSettings = .simulator(bundleID: DeliveryPolicy.exampleBundleID)
    /// Customer JWT verification (docs/design.md §9.1); nil accepts no customer tokens.
    public var customerTokens: CustomerTokenSettings?
    /// Read deadline, idle timeout and connection cap of the HTTP server.
    public var connectionLimits = ConnectionLimits()
    /// `CREMA_MASTER_KEY`: seals `.p8` keys stored in the database; nil: only keys kept as files can be added.
    public var masterKey: MasterKey?
    /// `CREMA_RETENTION_DAYS`: days after an order's end before its personal data is removed (docs/data-lifecycle.md).
    public var retentionDays = Self.defaultRetentionDays
    /// `CREMA_WEBHOOK_ALLOW_PRIVATE=1`: webhook receivers on private and loopback addresses are allowed.
    public var webhookAllowsPrivateAddresses = false
    /// `CREMA_WEBHOOK_CA_FILE`: a PEM of extra CAs trusted for HTTPS webhook receivers (a private CA), beside the system's.
    public var webhookCAFile: String?
    /// The operator's load limits for every tenant (`CREMA_LIMIT_*`, `CREMA_RATE_LIMIT`; docs/limits.md).
    public var limits = TenantLimits.defaults

    /// A month: long enough for a customer's questions about an order, short enough not to keep names for nothing.
    public static let defaultRetentionDays = 30
    /// At least a day (longer than the Idempotency-Keys' 24 hours, whose stored answers retention leaves to their
    /// own pruning), at most ten years.
    public static let retentionDaysRange = 1...3650

    public init(
        database: Database, embeddedDirectory: URL = URL(fileURLWithPath: ".crema"), host: String = "127.0.0.1",
        port: Int = 8080, apiKeys: APIKeys = APIKeys(), poolSize: Int = 16, logLevel: String = "info"
    ) {
        self.database = database
        self.embeddedDirectory = embeddedDirectory
        self.host = host
        self.port = port
        self.apiKeys = apiKeys
        self.poolSize = poolSize
        self.logLevel = logLevel
    }

    /// The `PG*` variables libpq reads; any of them set means "use that database".
    static let libpqVariables: Set<String> = [
        "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE", "PGSERVICE",
        "PGSERVICEFILE", "PGSSLMODE", "PGOPTIONS", "PGAPPNAME", "PGCONNECT_TIMEOUT",
    ]

    /// Reads `CREMA_DATABASE_URL`, `PG*`, `CREMA_HTTP_HOST`, `CREMA_HTTP_PORT`, `CREMA_API_KEYS`,
    /// `CREMA_DATA_DIR` (embedded cluster folder, default `.crema`), `CREMA_DB_POOL_SIZE`, `CREMA_RETENTION_DAYS`, `CREMA_WEBHOOK_ALLOW_PRIVATE`, `CREMA_WEBHOOK_CA_FILE`, `LOG_LEVEL` and the
    /// connection limits (`CREMA_HTTP_READ_TIMEOUT`, `CREMA_HTTP_IDLE_TIMEOUT`, `CREMA_HTTP_MAX_CONNECTIONS`).
    /// Commands that take no requests (`migrate`, `dispatch`) pass `readsAPIKeys: false`: keys they never use
    /// cannot stop them, whatever `CREMA_API_KEYS` holds.
    public init(environment: [String: String], readsAPIKeys: Bool = true) throws(ConfigurationError) {
        if let url = environment["CREMA_DATABASE_URL"], !url.isEmpty {
            database = .conninfo(url)
        } else if environment.keys.contains(where: Self.libpqVariables.contains) {
            database = .conninfo("")
        } else {
            database = .embedded
        }
        if let url = environment["CREMA_DATABASE_READ_URL"], !url.isEmpty {
            guard database != .embedded else {
                throw .invalid("CREMA_DATABASE_READ_URL", "needs CREMA_DATABASE_URL (or PG* variables) naming the primary it is a standby of")
            }
            readDatabaseURL = url
        }
        embeddedDirectory = URL(fileURLWithPath: environment["CREMA_DATA_DIR"] ?? ".crema")
        host = environment["CREMA_HTTP_HOST"] ?? "127.0.0.1"
        let portText = environment["CREMA_HTTP_PORT"] ?? "8080"
        guard let port = Int(portText), (0...65535).contains(port) else { throw .invalid("CREMA_HTTP_PORT", portText) }
        self.port = port
        apiKeys = readsAPIKeys ? try APIKeys(parsing: environment["CREMA_API_KEYS"] ?? "") : APIKeys()
        if readsAPIKeys, let admin = environment["CREMA_ADMIN_KEY"], !admin.isEmpty { try apiKeys.addAdmin(admin) }
        if let text = environment["CREMA_MASTER_KEY"], !text.isEmpty {
            do throws(MasterKeyError) {
                masterKey = try MasterKey(base64: text)
            } catch {
                throw .invalid("CREMA_MASTER_KEY", "is not usable: \(error)")
            }
        }
        let poolText = environment["CREMA_DB_POOL_SIZE"] ?? "16"
        guard let poolSize = Int(poolText), (1...500).contains(poolSize) else { throw .invalid("CREMA_DB_POOL_SIZE", poolText) }
        self.poolSize = poolSize
        let retentionText = environment["CREMA_RETENTION_DAYS"] ?? "\(Self.defaultRetentionDays)"
        guard let retentionDays = Int(retentionText), Self.retentionDaysRange.contains(retentionDays) else {
            throw .invalid("CREMA_RETENTION_DAYS", retentionText)
        }
        self.retentionDays = retentionDays
        switch environment["CREMA_WEBHOOK_ALLOW_PRIVATE"] ?? "" {
        case "", "0": webhookAllowsPrivateAddresses = false
        case "1": webhookAllowsPrivateAddresses = true
        case let other: throw .invalid("CREMA_WEBHOOK_ALLOW_PRIVATE", "is \"\(other)\"; set 1 to allow private receivers, or leave it unset")
        }
        if let file = environment["CREMA_WEBHOOK_CA_FILE"], !file.isEmpty {
            guard FileManager.default.isReadableFile(atPath: file) else { throw .invalid("CREMA_WEBHOOK_CA_FILE", "\(file) is not a readable file") }
            webhookCAFile = file
        }
        logLevel = environment["LOG_LEVEL"] ?? "info"
        limits = try Self.limits(environment)
        apns = try APNsSettings(environment: environment)
        customerTokens = try CustomerTokenSettings(environment: environment)
        connectionLimits = try ConnectionLimits(environment: environment)
    }
}

extension CremaConfiguration {
    /// The operator's limits: each `CREMA_LIMIT_*` a whole number in its range, `CREMA_RATE_LIMIT` as `rate/burst` or `0`.
    static func limits(_ environment: [String: String]) throws(ConfigurationError) -> TenantLimits {
        var limits = TenantLimits.defaults
        for name in LimitName.allCases {
            guard let text = environment[name.variable], !text.isEmpty else { continue }
            if name == .rate {
                guard let rate = RateSetting(parsing: text) else {
                    throw .invalid(name.variable, "is \"\(text)\"; expected rate/burst requests per second (e.g. 200/400), or 0 for no rate limit")
                }
                limits.rate = rate
                continue
            }
            let range = TenantLimits.countRange[name]!
            guard let value = Int(text), range.contains(value) else {
                throw .invalid(name.variable, "is \"\(text)\"; expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            switch name {
            case .tokensPerCustomer: limits.tokensPerCustomer = value
            case .streamsPerKey: limits.streamsPerKey = value
            case .webhooks: limits.webhooks = value
            case .eventsPerOrder: limits.eventsPerOrder = value
            case .rate: break
            }
        }
        return limits
    }
}

/// Where Crema sends pushes, from the `CREMA_APNS_*` variables (docs/design.md §9).
public enum APNsSettings: Sendable, Equatable {
    /// No Apple key configured: the built-in simulator, in-process, with a key generated for it.
    case simulator(bundleID: String)
    /// A `.p8` key: Apple's production and sandbox hosts by token environment, or everything to `url`
    /// (a simulator or proxy) trusting `caFile` in addition to the system roots. `broadcastURL` and `channelsURL`
    /// (`CREMA_APNS_BROADCAST_URL`, `CREMA_APNS_CHANNELS_URL`) move broadcasts and channel management of both
    /// environments elsewhere; unset, they follow `url`, or Apple's hosts for the environment.
    case apple(
        keyFile: String, keyID: String, teamID: String, bundleID: String, url: URL?, caFile: String?,
        broadcastURL: URL? = nil, channelsURL: URL? = nil)

    public var bundleID: String {
        switch self {
        case .simulator(let bundleID), .apple(_, _, _, let bundleID, _, _, _, _): bundleID
        }
    }

    public init(environment: [String: String]) throws(ConfigurationError) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let topic = value("CREMA_APNS_TOPIC")
        guard let keyFile = value("CREMA_APNS_KEY_FILE") else {
            for name in ["CREMA_APNS_URL", "CREMA_APNS_BROADCAST_URL", "CREMA_APNS_CHANNELS_URL"] where value(name) != nil {
                throw .invalid(name, "set, but CREMA_APNS_KEY_FILE is not: a server other than the built-in simulator needs a signing key")
            }
            self = .simulator(bundleID: topic ?? DeliveryPolicy.exampleBundleID)
            return
        }
        guard let keyID = value("CREMA_APNS_KEY_ID") else { throw .invalid("CREMA_APNS_KEY_ID", "missing (the 10-character Key ID of the .p8 key)") }
        guard let teamID = value("CREMA_APNS_TEAM_ID") else { throw .invalid("CREMA_APNS_TEAM_ID", "missing (the 10-character Team ID)") }
        guard let topic else { throw .invalid("CREMA_APNS_TOPIC", "missing (the app's bundle ID)") }
        func httpsURL(_ name: String) throws(ConfigurationError) -> URL? {
            guard let text = value(name) else { return nil }
            guard let parsed = URL(string: text), parsed.scheme == "https", parsed.host != nil else {
                throw .invalid(name, "must be an https:// URL")
            }
            return parsed
        }
        self = .apple(
            keyFile: keyFile, keyID: keyID, teamID: teamID, bundleID: topic, url: try httpsURL("CREMA_APNS_URL"),
            caFile: value("CREMA_APNS_CA_FILE"), broadcastURL: try httpsURL("CREMA_APNS_BROADCAST_URL"),
            channelsURL: try httpsURL("CREMA_APNS_CHANNELS_URL"))
    }
}

/// A configuration value Crema cannot use; the message names the variable and never echoes secrets.
public enum ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    case invalid(String, String)
    case badAPIKeys(String)

    public var code: String {
        switch self {
        case .invalid: "invalid_configuration"
        case .badAPIKeys: "invalid_api_keys"
        }
    }

    public var description: String {
        switch self {
        case .invalid(let name, let reason)
        where name.hasPrefix("CREMA_APNS_") || name.hasPrefix("CREMA_LIMIT_") || name == "CREMA_RATE_LIMIT" || name.hasPrefix("CREMA_CUSTOMER_JWT_") || name == "CREMA_ADMIN_KEY" || name == "CREMA_MASTER_KEY":
            "\(name) \(reason)"
        case .invalid(let name, let value): "\(name)=\(value) is not valid"
        case .badAPIKeys(let reason): "CREMA_API_KEYS: \(reason) (expected role:key pairs, each key at least 16 characters, e.g. pos:till-key-8f2a61c0d5e9,barista:bar-key-4b7a8c3e1f6d)"
        }
    }
}
