/// How an ``APNsSimulator`` listens and which provider tokens and topics it accepts, so tests and demos can
/// run Crema's real delivery path without Apple.
public struct APNsSimulatorConfiguration: Sendable {
    /// Listen address; loopback by default.
    public var host: String = "127.0.0.1"
    /// Listen port; 0 picks a free one (read it back from ``APNsSimulator/port``).
    public var port: Int = 0
    /// Folder holding the TLS certificate (`ca.pem`, which clients trust) and its key (`key.pem`).
    public var directory: String
    /// The Team ID every JWT's `iss` must carry.
    public var teamID: String
    /// Key ID → public key PEM: the keys whose JWTs are accepted.
    public var keys: [String: String]
    /// When set, topics must be this bundle ID plus the push type's suffix; otherwise any well-formed topic.
    public var bundleID: String?
    /// Oldest records are dropped beyond this many.
    public var maxRecords: Int = 100_000

    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        directory: String,
        teamID: String,
        keys: [String: String],
        bundleID: String? = nil,
        maxRecords: Int = 100_000
    ) {
        self.host = host
        self.port = port
        self.directory = directory
        self.teamID = teamID
        self.keys = keys
        self.bundleID = bundleID
        self.maxRecords = maxRecords
    }
}
