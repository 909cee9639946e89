/// Every environment variable `crema` reads, written once: `crema --help` prints this list, and a test holds the
/// configuration table of docs/operations.md and the names the sources read to it, so the three cannot differ.
public enum ConfigurationVariables {
    /// One variable: its name, what it sets, and what applies when it is unset.
    public struct Variable: Sendable, Hashable {
        public let name: String
        public let meaning: String
        public let unset: String
    }

    public static let all: [Variable] = [
        .init(name: "CREMA_DATABASE_URL", meaning: "libpq conninfo or URI (libpq's PG* variables are honoured too)", unset: "the private cluster under .crema/"),
        .init(name: "CREMA_DATABASE_READ_URL", meaning: "libpq conninfo or URI of a standby for the board, stream, order lists and /v1/me reads", unset: "every read on the primary"),
        .init(name: "CREMA_HTTP_HOST", meaning: "listen address", unset: "127.0.0.1"),
        .init(name: "CREMA_HTTP_PORT", meaning: "listen port (0 picks a free one)", unset: "8080"),
        .init(name: "CREMA_HTTP_READ_TIMEOUT", meaning: "seconds a client has to send a whole request", unset: "10"),
        .init(name: "CREMA_HTTP_IDLE_TIMEOUT", meaning: "seconds a keep-alive connection may wait for its next request", unset: "60"),
        .init(name: "CREMA_HTTP_MAX_CONNECTIONS", meaning: "connections open at once (past it: 503)", unset: "4096"),
        .init(name: "CREMA_API_KEYS", meaning: "role:key pairs of the tenant 'default', comma-separated", unset: "generated on the private cluster; else required"),
        .init(name: "CREMA_ADMIN_KEY", meaning: "the bootstrap key of the admin role", unset: "generated on the private cluster; else no admin API"),
        .init(name: "CREMA_MASTER_KEY", meaning: "base64 of 32 random bytes; seals stored secrets", unset: "generated into .crema/master-key on the private cluster"),
        .init(name: "CREMA_DATA_DIR", meaning: "folder of the private cluster and generated keys", unset: ".crema"),
        .init(name: "CREMA_DB_POOL_SIZE", meaning: "database connections", unset: "16"),
        .init(name: "CREMA_RETENTION_DAYS", meaning: "days after an order ended before its personal data is removed", unset: "30"),
        .init(name: "CREMA_PG_BINDIR", meaning: "where initdb and pg_ctl are", unset: "/usr/lib/postgresql/<n>/bin or PATH"),
        .init(name: "LOG_LEVEL", meaning: "trace … critical", unset: "info"),
        .init(name: "CREMA_APNS_KEY_FILE", meaning: "the .p8 signing key", unset: "the built-in APNs simulator"),
        .init(name: "CREMA_APNS_KEY_ID", meaning: "the key's Key ID", unset: "required with a key"),
        .init(name: "CREMA_APNS_TEAM_ID", meaning: "your Team ID", unset: "required with a key"),
        .init(name: "CREMA_APNS_TOPIC", meaning: "the app's bundle ID", unset: "cafe.crema.example with the simulator; required with a key"),
        .init(name: "CREMA_APNS_URL", meaning: "send every push to this server", unset: "Apple's hosts by token environment"),
        .init(name: "CREMA_APNS_BROADCAST_URL", meaning: "send broadcasts of both environments to this server", unset: "CREMA_APNS_URL, else Apple's push host by channel environment"),
        .init(name: "CREMA_APNS_CHANNELS_URL", meaning: "manage broadcast channels of both environments at this server", unset: "CREMA_APNS_URL, else Apple's api-manage-broadcast host by environment"),
        .init(name: "CREMA_APNS_CA_FILE", meaning: "extra PEM trust roots for CREMA_APNS_URL", unset: "the system's"),
        .init(name: "CREMA_CUSTOMER_JWT_KEYS", meaning: "keys verifying the default tenant's customer tokens (hs256:… or es256:<PEM path>)", unset: "customer tokens refused"),
        .init(name: "CREMA_CUSTOMER_JWT_ISSUER", meaning: "the iss a customer token must carry", unset: "required with the keys"),
        .init(name: "CREMA_CUSTOMER_JWT_AUDIENCE", meaning: "the aud a customer token must carry", unset: "required with the keys"),
        .init(name: "CREMA_WEBHOOK_ALLOW_PRIVATE", meaning: "1: webhook receivers on private addresses and http:// allowed", unset: "refused"),
        .init(name: "CREMA_WEBHOOK_CA_FILE", meaning: "extra PEM CAs for HTTPS webhook receivers", unset: "the system's"),
        .init(name: "CREMA_LIMIT_TOKENS_PER_CUSTOMER", meaning: "device tokens one customer may hold per kind", unset: "20"),
        .init(name: "CREMA_LIMIT_STREAMS_PER_KEY", meaning: "dashboard streams one API key may hold open", unset: "64"),
        .init(name: "CREMA_LIMIT_WEBHOOKS_PER_TENANT", meaning: "webhook endpoints per tenant", unset: "20"),
        .init(name: "CREMA_LIMIT_EVENTS_PER_ORDER", meaning: "events one order may hold", unset: "64"),
        .init(name: "CREMA_RATE_LIMIT", meaning: "requests per second per API key and per customer, rate/burst; 0: off", unset: "200/400"),
    ]

    /// The list as `crema --help` prints it.
    public static var helpText: String {
        all.map { "  \($0.name): \($0.meaning) (unset: \($0.unset))" }.joined(separator: "\n")
    }
}
