public import CremaClock
public import CremaCore
public import CremaStore
public import Foundation

/// Webhook endpoints (docs/webhooks.md): registration with everything that can be checked then (the URL, the event
/// types, the host's addresses), the delivery log, and replay. The dispatcher checks the address again at send time.
public struct WebhookService: Sendable {
    public let database: CremaDatabase
    public let masterKey: MasterKey?
    /// `CREMA_WEBHOOK_ALLOW_PRIVATE=1`: private and loopback receivers are allowed (a receiver on the same network).
    public let allowsPrivateAddresses: Bool
    public let policy: WebhookPolicy
    /// Where the tenant's `webhooks` limit comes from (docs/limits.md).
    public let limits: TenantLimitsDirectory
    /// Runs registrations and replays once per Idempotency-Key.
    public let idempotency: IdempotencyGate
    /// The host's addresses (4 or 16 bytes each), from DNS; injected so the network stays at the edge.
    private let resolve: @Sendable (String) async throws -> [[UInt8]]
    private let clock: CremaClock
    private let makeID: @Sendable () -> UUID

    public init(
        database: CremaDatabase, limits: TenantLimitsDirectory, masterKey: MasterKey?, allowsPrivateAddresses: Bool,
        policy: WebhookPolicy = WebhookPolicy(), resolve: @escaping @Sendable (String) async throws -> [[UInt8]], idempotency: IdempotencyGate? = nil,
        clock: CremaClock, makeID: @escaping @Sendable () -> UUID = UUID.init
    ) {
        self.database = database
        self.limits = limits
        self.masterKey = masterKey
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.policy = policy
        self.resolve = resolve
        self.idempotency = idempotency ?? IdempotencyGate(repository: database.idempotency, clock: clock)
        self.clock = clock
        self.makeID = makeID
    }

    /// Registers an endpoint at `url` for the event types named in `events`, for `scope` (its stores become the
    /// endpoint's); the secret is in the answer only.
    public func register(url text: String, events names: [String], in scope: TenantScope) async throws -> (StoredWebhookEndpoint, secret: String) {
        let url: WebhookURL
        do throws(WebhookURL.Refusal) {
            url = try WebhookURL(text)
        } catch {
            throw ServiceError.invalidField(field: "url", reason: "\(error)")
        }
        var events: [WebhookEventType] = []
        for name in names {
            guard let type = WebhookEventType(rawValue: name) else {
                throw ServiceError.invalidField(
                    field: "events", reason: "names '\(name)'; the types are \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !events.contains(type) { events.append(type) }
        }
        guard !events.isEmpty else {
            throw ServiceError.invalidField(field: "events", reason: "must name at least one event type")
        }
        // Bodies carry customers' names: in cleartext only to a receiver on the operator's own network.
        guard url.isHTTPS || allowsPrivateAddresses else {
            throw ServiceError.invalidField(
                field: "url", reason: "must be https:// (bodies carry customers' names; http:// is allowed only with CREMA_WEBHOOK_ALLOW_PRIVATE=1)")
        }
        guard let masterKey else { throw ServiceError.webhookSecretNeedsMasterKey }
        _ = try await checkedAddresses(of: url)
        let id = makeID()
        let secret = WebhookSecret.generate()
        let endpoint = StoredWebhookEndpoint(
            tenant: scope.tenant, id: id, url: url.description, events: events, stores: scope.sortedStores,
            sealedSecret: try WebhookSecret.seal(secret, tenant: scope.tenant, endpoint: id, masterKey: masterKey), createdAt: clock.now)
        try await database.webhooks.insert(endpoint, limit: try await limits.limits(for: scope.tenant).webhooks)
        return (endpoint, secret)
    }

    /// The addresses a request to `url` may go to: its host's, all of them public unless private ones are allowed.
    /// Throws `webhookAddressRefused` when the host does not resolve or any address is refused (a host that answers
    /// with one public and one private address could be steered to the private one).
    public func checkedAddresses(of url: WebhookURL) async throws(ServiceError) -> [[UInt8]] {
        let addresses: [[UInt8]]
        if let literal = IPAddressText.bytes(url.host) {
            addresses = [literal]
        } else {
            do {
                addresses = try await resolve(url.host)
            } catch {
                throw .webhookAddressRefused(host: url.host, reason: "it does not resolve")
            }
            guard !addresses.isEmpty else { throw .webhookAddressRefused(host: url.host, reason: "it does not resolve") }
        }
        if !allowsPrivateAddresses, addresses.contains(where: { !WebhookAddress.isPublic($0) }) {
            // Which address is not said: the answer would tell any key holder what names resolve to inside the network
            // Crema runs in (an operator resolves the host itself).
            throw .webhookAddressRefused(
                host: url.host, reason: "it resolves to a private, loopback or reserved address (set CREMA_WEBHOOK_ALLOW_PRIVATE=1 to allow)")
        }
        return addresses
    }

    /// An endpoint's secret, for signing.
    public func secret(of tenant: String, endpoint: UUID, sealed: [UInt8]) throws -> String {
        guard let masterKey else { throw ServiceError.webhookSecretNeedsMasterKey }
        return try WebhookSecret.open(sealed, tenant: tenant, endpoint: endpoint, masterKey: masterKey)
    }

    public func replay(delivery: Int64, endpoint: UUID, in scope: TenantScope) async throws -> WebhookDeliveryRecord {
        switch try await database.webhooks.replay(delivery: delivery, endpoint: endpoint, in: scope, now: clock.now) {
        case .replayed(let record): return record
        case .unknownDelivery:
            throw try await database.webhooks.endpoint(id: endpoint, in: scope) == nil ? ServiceError.unknownWebhook : ServiceError.unknownWebhookDelivery
        case .notDead(let state): throw ServiceError.webhookDeliveryNotDead(state: state)
        case .endpointDisabled: throw ServiceError.webhookDisabled
        }
    }
}
