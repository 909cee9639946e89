/// A browser's single-use stream ticket as it travels (`POST /v1/stream/tickets`, `GET /v1/stream?…&ticket=`):
/// `<tenant>.<secret>`. The tenant rides in the ticket so that redeeming it names the tenant: stream tickets are
/// kept per tenant, and under Citus a lookup without the tenant goes to every node (docs/scaling.md). The secret is
/// the credential; the tenant is no secret from the dashboard that asked for the ticket. A tenant id has no dot, so
/// the first dot splits the two.
public struct StreamTicket: Sendable, Hashable, CustomStringConvertible {
    public var tenant: String
    public var secret: String

    public init(tenant: String, secret: String) {
        self.tenant = tenant
        self.secret = secret
    }

    /// Reads a ticket as a client presents it; nil when it has no valid tenant or no secret (such a ticket was
    /// never issued, so it is refused as unknown).
    public init?(_ text: String) {
        guard let dot = text.firstIndex(of: "."), case let tenant = String(text[..<dot]), TenantID.isValid(tenant) else { return nil }
        let secret = String(text[text.index(after: dot)...])
        guard !secret.isEmpty else { return nil }
        self.init(tenant: tenant, secret: secret)
    }

    /// The text a client is given and presents back.
    public var description: String { "\(tenant).\(secret)" }
}
