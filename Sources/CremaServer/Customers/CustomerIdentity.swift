public import Foundation

/// Who a verified customer token speaks for: the customer ref (its `sub`) in a tenant.
public struct CustomerIdentity: Sendable, Hashable {
    public var ref: String
    /// `default` until tenants land (docs/design.md §9.1); other tenants are refused before an identity is made.
    public var tenant: String
    public var expiresAt: Date

    public init(ref: String, tenant: String, expiresAt: Date) {
        self.ref = ref
        self.tenant = tenant
        self.expiresAt = expiresAt
    }
}
