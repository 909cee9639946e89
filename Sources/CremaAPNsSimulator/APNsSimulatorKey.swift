/// A provider key the simulator accepts: its Key ID, the one team whose JWTs (`iss`) it may sign, and its
/// public key. Several apps of several teams can share one simulator, as they share Apple.
public struct APNsSimulatorKey: Sendable, Hashable {
    /// The JWT header's `kid`.
    public var keyID: String
    /// The Team ID a JWT signed by this key must carry as `iss`.
    public var teamID: String
    /// The key's public half, SubjectPublicKeyInfo PEM.
    public var publicKeyPEM: String

    public init(keyID: String, teamID: String, publicKeyPEM: String) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyPEM = publicKeyPEM
    }
}
