public import CremaCore
import Foundation

/// The bearer keys Crema accepts and the role each one grants. Keys are compared in constant time and
/// never logged; `description` shows only roles and counts.
public struct APIKeys: Sendable, CustomStringConvertible {
    private var entries: [(key: [UInt8], role: Role)] = []

    public init() {}

    public init(_ pairs: [(role: Role, key: String)]) {
        entries = pairs.map { (Array($0.key.utf8), $0.role) }
    }

    /// Parses `role:key` pairs separated by commas, as in `CREMA_API_KEYS`.
    public init(parsing text: String) throws(ConfigurationError) {
        for pair in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !pair.isEmpty {
            guard let colon = pair.firstIndex(of: ":") else { throw .badAPIKeys("an entry has no ':'") }
            let roleName = String(pair[..<colon])
            guard let role = Role(rawValue: roleName) else {
                throw .badAPIKeys("unknown role '\(roleName)'; roles are pos, barista, dashboard, app")
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

    /// The role a presented key grants, or nil.
    public func role(for presented: Substring) -> Role? {
        let bytes = Array(presented.utf8)
        var found: Role?
        for entry in entries where Self.constantTimeEquals(entry.key, bytes) { found = entry.role }
        return found
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

    /// Random keys for every role, for the embedded default.
    public static func generate() -> APIKeys {
        var generator = SystemRandomNumberGenerator()
        return APIKeys(
            Role.allCases.map { role in
                let bytes = (0..<24).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                return (role, "\(role.rawValue)_" + bytes.map { String($0, radix: 16).leftPadded(2) }.joined())
            })
    }

    private static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
