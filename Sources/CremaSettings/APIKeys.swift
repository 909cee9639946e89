import CremaAPNsProtocol
public import CremaCore
public import CremaCredentials
import Foundation

/// The bearer keys from the environment and the role each one grants: `CREMA_API_KEYS` (the default tenant's
/// role keys, every store) and `CREMA_ADMIN_KEY` (the bootstrap admin key, every tenant). Keys are compared in
/// constant time and never logged; `description` shows only roles and counts.
public struct APIKeys: Sendable, CustomStringConvertible {
    private var entries: [(key: [UInt8], role: Role)] = []

    public init() {}

    public init(_ pairs: [(role: Role, key: String)]) {
        entries = pairs.map { (Array($0.key.utf8), $0.role) }
    }

    /// Parses `role:key` pairs separated by commas, as in `CREMA_API_KEYS`. `allowsAdmin` only for the embedded
    /// default's own `.crema/api-keys`, which keeps the admin key it generated beside the others.
    public init(parsing text: String, allowsAdmin: Bool = false) throws(ConfigurationError) {
        for pair in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !pair.isEmpty {
            guard let colon = pair.firstIndex(of: ":") else { throw .badAPIKeys("an entry has no ':'") }
            let roleName = String(pair[..<colon])
            guard let role = Role(rawValue: roleName), Role.keyRoles.contains(role), role != .admin || allowsAdmin else {
                throw .badAPIKeys("unknown role '\(roleName)'; roles are pos, barista, dashboard, app (the admin key is CREMA_ADMIN_KEY)")
            }
            let key = String(pair[pair.index(after: colon)...])
            guard key.utf8.count >= 16 else { throw .badAPIKeys("the \(roleName) key is shorter than 16 characters") }
            guard key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw .badAPIKeys("the \(roleName) key has characters other than printable ASCII")
            }
            entries.append((Array(key.utf8), role))
        }
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// Adds the bootstrap admin key (`CREMA_ADMIN_KEY`), at least 16 printable ASCII characters.
    public mutating func addAdmin(_ key: String) throws(ConfigurationError) {
        guard key.utf8.count >= 16, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalid("CREMA_ADMIN_KEY", "must be at least 16 printable ASCII characters")
        }
        entries.append((Array(key.utf8), .admin))
    }

    /// What a presented key grants, or nil: a role key acts in the default tenant, the admin key in every tenant.
    public func principal(for presented: Substring) -> APIPrincipal? {
        let bytes = Array(presented.utf8)
        var found: (role: Role, index: Int)?
        // Every entry is compared (no early exit), so the time taken does not tell which key matched.
        for (index, entry) in entries.enumerated() where APIKeySecret.matches(entry.key, bytes) { found = (entry.role, index) }
        return found.map {
            APIPrincipal(
                role: $0.role, tenant: $0.role == .admin ? nil : TenantScope.defaultTenantName, holder: "configured:\($0.role.rawValue)-\($0.index)")
        }
    }

    /// The first key of a role (for printing the embedded default's keys).
    public func key(for role: Role) -> String? {
        entries.first { $0.role == role }.map { String(decoding: $0.key, as: UTF8.self) }
    }

    /// `pos:key,barista:key,…`, the `CREMA_API_KEYS` form.
    public var environmentValue: String {
        entries.map { "\($0.role.rawValue):\(String(decoding: $0.key, as: UTF8.self))" }.joined(separator: ",")
    }

    public var description: String {
        let roles = Dictionary(grouping: entries, by: \.role).mapValues(\.count)
        return "APIKeys(" + roles.keys.sorted().map { "\($0.rawValue): \(roles[$0]!)" }.joined(separator: ", ") + ")"
    }

    /// Random keys for every role, the admin key included, for the embedded default.
    public static func generate() -> APIKeys {
        APIKeys(Role.keyRoles.map { role in (role, "\(role.rawValue)_" + [UInt8].random(count: 24).hexEncoded) })
    }
}
