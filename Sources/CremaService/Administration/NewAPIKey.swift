public import Foundation

/// An API key to issue (`POST /v1/admin/tenants/{tenant}/api-keys`, `crema admin api-key issue`): its role (a name,
/// checked by `AdminService.issueAPIKey`), the stores it is limited to (nil: every store) and when it expires.
public struct NewAPIKey: Sendable {
    public var role: String
    public var stores: [String]?
    public var expiresAt: Date?

    public init(role: String, stores: [String]? = nil, expiresAt: Date? = nil) {
        self.role = role
        self.stores = stores
        self.expiresAt = expiresAt
    }
}
