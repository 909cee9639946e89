/// The roles an API key can carry; each route and event admits only the roles that need it.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case pos
    case barista
    case dashboard
    case app
    /// Tenants, apps, APNs keys and API keys (docs/tenants.md); never orders.
    case admin
    /// Crema itself (the expiry sweep); recorded as an event's actor, never held by an API key.
    case system

    /// The roles that act on a tenant's orders and tokens (every role but `admin`).
    public static let tenantRoles: [Role] = [.pos, .barista, .dashboard, .app]

    /// The roles an API key may carry: every role but `system`.
    public static let keyRoles: [Role] = allCases.filter { $0 != .system }

    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
