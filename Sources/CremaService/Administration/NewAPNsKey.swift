/// A `.p8` key to add to an app (`POST /v1/admin/tenants/{tenant}/apps/{bundle_id}/apns-keys`, `crema admin apns-key
/// add`): its PEM text (sealed under the master key) or a path on the dispatcher's machine, exactly one of the two.
public struct NewAPNsKey: Sendable {
    public var keyID: String
    public var p8: String?
    public var p8Path: String?
    /// nil: active at once.
    public var active: Bool?

    public init(keyID: String, p8: String? = nil, p8Path: String? = nil, active: Bool? = nil) {
        self.keyID = keyID
        self.p8 = p8
        self.p8Path = p8Path
        self.active = active
    }
}
