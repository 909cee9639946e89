public import CremaClock

/// How an ``APNsSimulator`` listens and which provider tokens and topics it accepts, so tests and demos can
/// run Crema's real delivery path without Apple.
public struct APNsSimulatorConfiguration: Sendable {
    /// Listen address; loopback by default.
    public var host: String = "127.0.0.1"
    /// Listen port; 0 picks a free one (read it back from ``APNsSimulator/port``).
    public var port: Int = 0
    /// Folder holding the TLS certificate (`ca.pem`, which clients trust) and its key (`key.pem`).
    public var directory: String
    /// The keys whose JWTs are accepted, each for its own team.
    public var keys: [APNsSimulatorKey]
    /// The apps pushes may go to: a topic minus its push type's suffix must be one of them. Empty accepts any
    /// well-formed topic.
    public var bundleIDs: Set<String>
    /// Oldest records are dropped beyond this many.
    public var maxRecords: Int = 100_000
    /// The most broadcast channels one app may hold; one more is 400 `CannotCreateChannelConfig` (APNs: 10,000 per
    /// app and environment; a test sets a few).
    public var maxChannelsPerApp: Int = 10_000
    /// When requests arrive and provider tokens are judged, and what the certificate's validity is checked against.
    public var clock: CremaClock
    /// Refuses a push-to-start without `apns-collapse-id` (400 `BadCollapseId`). Apple does not, but a start sent
    /// twice without one makes two activities on the phone (push-anchors P8), so Crema's own simulator holds Crema to
    /// it; off for a stand-in of Apple's rules alone.
    public var startsNeedCollapseID = false

    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        directory: String,
        keys: [APNsSimulatorKey],
        bundleIDs: Set<String> = [],
        maxRecords: Int = 100_000,
        maxChannelsPerApp: Int = 10_000,
        clock: CremaClock
    ) {
        self.host = host
        self.port = port
        self.directory = directory
        self.keys = keys
        self.bundleIDs = bundleIDs
        self.maxRecords = maxRecords
        self.maxChannelsPerApp = maxChannelsPerApp
        self.clock = clock
    }
}
