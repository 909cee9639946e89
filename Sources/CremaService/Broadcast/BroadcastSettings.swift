/// How a store's board goes on a broadcast channel (`PUT /v1/stores/{store}/broadcast`), in the application layer's
/// own words: what `BroadcastService.enable` checks against APNs and against the channel the store may already have.
public struct BroadcastSettings: Sendable, Hashable {
    /// `none` or `latest`: how the channel stores messages.
    public var storage: String
    /// The app the channel belongs to; nil: the tenant's only app.
    public var bundleID: String?
    /// `sandbox` or `production`; nil: production.
    public var environment: String?

    public init(storage: String, bundleID: String? = nil, environment: String? = nil) {
        self.storage = storage
        self.bundleID = bundleID
        self.environment = environment
    }
}
