public import Foundation

/// One request the simulator received, accepted or refused, with the headers exactly as sent: what tests and
/// `GET /sim/requests` inspect to prove what Crema put on the wire.
public struct APNsSimulatorRecord: Sendable, Codable, Hashable {
    /// When the request's last byte arrived.
    public var receivedAt: Date
    /// The token from `:path` (`/3/device/<token>`), empty when the path had none.
    public var deviceToken: String
    /// The raw `apns-push-type` header.
    public var pushType: String?
    /// The raw `apns-topic` header.
    public var topic: String?
    /// The raw `apns-priority` header.
    public var priority: String?
    /// The raw `apns-expiration` header.
    public var expiration: String?
    /// The raw `apns-collapse-id` header.
    public var collapseID: String?
    /// The `apns-id` answered: the request's own, or one the simulator generated.
    public var apnsID: String
    /// The request body as text (JSON when well-formed).
    public var body: String
    /// The status answered (0 when the connection was dropped without an answer).
    public var status: Int
    /// Apple's reason string for a refusal; nil on 200.
    public var reason: String?
    /// What exactly was wrong, in words, when the reason alone is vague (not part of APNs' answer contract).
    public var detail: String?
    /// The request method and path.
    public var method: String
    public var path: String
    /// `h2` or `http/1.1`.
    public var httpVersion: String
    /// Which TLS connection carried the request (1, 2, … in order of acceptance).
    public var connectionID: Int
    /// The JWT's `kid`, when the token could be read.
    public var keyID: String?
    /// The JWT's `iss` (the team it claims to sign for), when the token could be read.
    public var teamID: String?
    /// The JWT's `iat`, when the token could be read.
    public var tokenIssuedAt: Date?
    /// The first 16 hex characters of the JWT's SHA-256: tells tokens apart without storing them.
    public var tokenFingerprint: String?
    /// Broadcasts and channel management: the `apns-channel-id` sent, or the id of the channel created.
    public var channelID: String?
}

extension APNsSimulatorRecord {
    /// A `POST /4/broadcasts/apps/…` (accepted or refused).
    var isBroadcast: Bool { path.hasPrefix("/4/broadcasts/") }

    /// What a test waiting on arrivals counts this request under: its channel for a broadcast, else its device
    /// token (hex, so the two never meet).
    var arrivalKey: String { isBroadcast ? "channel:" + (channelID ?? "") : deviceToken }
}
