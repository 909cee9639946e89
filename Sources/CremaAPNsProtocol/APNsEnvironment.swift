/// Which APNs environment issued a device token: a sandbox token sent to production is 400 `BadDeviceToken`.
public enum APNsEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox
    case production
}
