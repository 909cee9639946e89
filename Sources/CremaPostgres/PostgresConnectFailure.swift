import CLibPQ
import Foundation

/// Where a connection that could not be opened was going, and libpq's reason. A bare `connection_failed` left an
/// operator with a wrong `CREMA_DATABASE_URL` guessing; this names the server without ever naming the password, so it
/// is safe in `description`, on a terminal and in logs.
public struct PostgresConnectFailure: Sendable, Equatable, CustomStringConvertible {
    /// Empty when libpq could not read the conninfo at all (then `reason` says why).
    public var host: String
    public var port: String
    public var database: String
    public var user: String
    /// `PQerrorMessage`, on one line, with the password (if libpq ever quoted it) masked.
    public var reason: String

    public init(host: String, port: String, database: String, user: String, reason: String) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.reason = reason
    }

    public var description: String {
        guard !host.isEmpty || !database.isEmpty || !user.isEmpty else { return "cannot read the connection settings: \(reason)" }
        return "cannot connect to host \(host) port \(port) database \(database) user \(user): \(reason)"
    }

    static let mask = "********"

    /// Reads the target back from a handle libpq could not connect.
    /// `conninfo` is only looked at when libpq could not parse it, to decide how much of its message is safe to keep.
    init(handle: OpaquePointer, conninfo: String) {
        func text(_ value: UnsafeMutablePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        host = text(PQhost(handle))
        port = text(PQport(handle))
        database = text(PQdb(handle))
        user = text(PQuser(handle))
        // libpq's messages span lines ("...failed: Connection refused\n\tIs the server running..."): one line reads better.
        var reason = PostgresConnection.message(handle).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        let password = text(PQpass(handle))
        if !password.isEmpty { reason = reason.replacingOccurrences(of: password, with: Self.mask) }
        // A conninfo libpq could not parse leaves no password to mask by, and some parse errors quote the whole URI or a
        // fragment of it: if it may hold a password, every quoted fragment goes.
        if PQstatus(handle) == CONNECTION_BAD, host.isEmpty, database.isEmpty, Self.mayHoldPassword(conninfo) {
            reason = Self.maskingQuotes(reason)
        }
        self.reason = reason
    }

    /// A `password` keyword, or a URI whose user part has a `:`.
    static func mayHoldPassword(_ conninfo: String) -> Bool {
        if conninfo.range(of: "password", options: .caseInsensitive) != nil { return true }
        guard let scheme = conninfo.range(of: "://") else { return false }
        let authority = conninfo[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" }
        guard let at = authority.lastIndex(of: "@") else { return false }
        return authority[..<at].contains(":")
    }

    static func maskingQuotes(_ text: String) -> String {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .map { $0.offset.isMultiple(of: 2) ? String($0.element) : mask }.joined(separator: "\"")
    }
}
