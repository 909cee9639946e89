/// Why a `.p8` signing key could not be used; raised at start-up so a bad key never reaches a send.
public enum APNsSigningKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file could not be read.
    case unreadableFile(path: String, reason: String)
    /// The text is not a PEM P-256 private key (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`).
    case invalidKey(reason: String)
    /// The Key ID or Team ID is empty or has characters that cannot go in a JWT header unescaped.
    case invalidIdentifier(name: String, value: String)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .unreadableFile: "apns_key_unreadable"
        case .invalidKey: "apns_key_invalid"
        case .invalidIdentifier: "apns_key_identifier_invalid"
        }
    }

    public var description: String {
        switch self {
        case .unreadableFile(let path, let reason): "\(code): cannot read the APNs key file \(path): \(reason)"
        case .invalidKey(let reason): "\(code): not a PEM P-256 private key: \(reason)"
        case .invalidIdentifier(let name, let value):
            "\(code): \(name) \"\(value)\" must be non-empty letters and digits"
        }
    }
}
