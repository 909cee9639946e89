/// Why the simulator could not start: reported once, at start-up, with a stable code.
public enum APNsSimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The certificate folder could not be created or written.
    case certificateDirectory(path: String, reason: String)
    /// A certificate could not be generated or loaded.
    case certificate(reason: String)
    /// A configured public key is not a PEM P-256 public key.
    case invalidPublicKey(keyID: String)
    /// The listener could not bind.
    case bind(host: String, port: Int, reason: String)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .certificateDirectory: "apns_sim_directory"
        case .certificate: "apns_sim_certificate"
        case .invalidPublicKey: "apns_sim_public_key_invalid"
        case .bind: "apns_sim_bind_failed"
        }
    }

    public var description: String {
        switch self {
        case .certificateDirectory(let path, let reason): "\(code): cannot use \(path): \(reason)"
        case .certificate(let reason): "\(code): \(reason)"
        case .invalidPublicKey(let keyID): "\(code): the public key for \(keyID) is not a PEM P-256 public key"
        case .bind(let host, let port, let reason): "\(code): cannot listen on \(host):\(port): \(reason)"
        }
    }
}
