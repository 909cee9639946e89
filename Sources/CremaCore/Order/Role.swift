/// The roles an API key can carry; each route and event admits only the roles that need it.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case pos
    case barista
    case dashboard
    case app
    /// Tenants, apps, APNs keys and API keys (docs/tenants.md); never orders.
    case admin

    /// The roles that act on a tenant's orders and tokens (every role but `admin`).
    public static let tenantRoles: [Role] = [.pos, .barista, .dashboard, .app]

    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
