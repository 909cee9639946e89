/// An app as its pushes are signed and claimed: a bundle id is its tenant's own (docs/tenants.md), so two tenants
/// may each register the same one, with their own keys. The pair, never the bundle id alone, names whose app it is.
public struct TenantApp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var tenant: String
    public var bundleID: String

    public init(tenant: String, bundleID: String) {
        self.tenant = tenant
        self.bundleID = bundleID
    }

    public static func < (lhs: TenantApp, rhs: TenantApp) -> Bool {
        (lhs.tenant, lhs.bundleID) < (rhs.tenant, rhs.bundleID)
    }

    /// `tenant/bundle id`, for logs: neither part can hold a slash.
    public var description: String { "\(tenant)/\(bundleID)" }
}
