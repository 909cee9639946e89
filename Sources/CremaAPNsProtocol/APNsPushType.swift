/// The `apns-push-type` header values Crema sends; each implies the topic suffix APNs checks it against.
public enum APNsPushType: String, Sendable, Hashable, Codable, CaseIterable {
    case alert
    case liveactivity
    case widgets

    /// The `apns-topic` for this push type: the bundle ID, with the suffix APNs requires for
    /// Live Activities and WidgetKit (a wrong suffix is 400 `DeviceTokenNotForTopic`).
    public func topic(bundleID: String) -> String {
        switch self {
        case .alert: bundleID
        case .liveactivity: bundleID + ".push-type.liveactivity"
        case .widgets: bundleID + ".push-type.widgets"
        }
    }
}
