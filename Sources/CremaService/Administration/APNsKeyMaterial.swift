public import CremaAPNsKey
public import CremaStore

/// Turns a stored APNs key back into a signing key: opens the sealed `.p8` with the master key, or reads the file.
public enum APNsKeyMaterial {
    /// What the sealed `.p8` of a key is bound to: its row, so sealed bytes copied to another row do not open.
    public static func context(tenant: String, bundleID: String, keyID: String) -> String {
        "crema/apns-key/\(tenant)/\(bundleID)/\(keyID)"
    }

    /// The signing key; throws `MasterKeyError` (sealed key, missing or other master key) or `APNsSigningKeyError`.
    public static func signingKey(_ stored: StoredAPNsKey, masterKey: MasterKey?) throws -> APNsSigningKey {
        switch stored.material {
        case .file(let path):
            return try APNsSigningKey(contentsOf: path, keyID: stored.keyID, teamID: stored.teamID)
        case .sealed(let bytes):
            guard let masterKey else { throw MasterKeyError.cannotOpen }
            let pem = try masterKey.open(bytes, boundTo: context(tenant: stored.tenant, bundleID: stored.bundleID, keyID: stored.keyID))
            return try APNsSigningKey(pem: String(decoding: pem, as: UTF8.self), keyID: stored.keyID, teamID: stored.teamID)
        }
    }
}
