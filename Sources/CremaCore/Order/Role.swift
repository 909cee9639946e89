/// The roles an API key can carry; each route and event admits only the roles that need it.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case pos
    case barista
    case dashboard
    case app

    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
