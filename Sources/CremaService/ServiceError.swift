public import CremaCore

/// Why an administrative, store or webhook operation was refused, in the application layer's own words: no HTTP
/// status here. `code` is the stable machine-readable code the API answers with; the server maps each case to its
/// `APIError` (status, message, details) at the edge (`APIError+HTTP.swift` in CremaServer), so the wire is the same
/// whether the HTTP API or `crema admin` called the service.
public enum ServiceError: Error, Sendable, Equatable {
    /// A field of the request is malformed (400 `invalid_field`).
    case invalidField(field: String, reason: String)
    /// A field is well-formed but out of range (422 `invalid_value`, as the core says it of an order's fields).
    case invalidValue(field: String, reason: String)
    case unknownApp(String)
    case unknownAPNsKey(String)
    case unknownAPIKey(String)
    /// A revoked API key named for rotation.
    case apiKeyRevoked
    /// A `.p8` that is not a P-256 private key in PEM, or a Key/Team ID of the wrong shape.
    case invalidAPNsKey(String)
    /// Sealing a secret (a `.p8`, a customer token secret) needs `CREMA_MASTER_KEY`, which this instance was not given.
    case masterKeyNotConfigured
    /// Webhook signing secrets are sealed like `.p8` keys: webhooks need `CREMA_MASTER_KEY`.
    case webhookSecretNeedsMasterKey
    /// A webhook host that does not resolve, or resolves to a private, loopback or reserved address.
    case webhookAddressRefused(host: String, reason: String)
    case unknownWebhook
    case unknownWebhookDelivery
    /// Only a dead delivery is sent again on request.
    case webhookDeliveryNotDead(state: String)
    /// The endpoint answered 410 Gone and was disabled.
    case webhookDisabled
    /// Another request with the Idempotency-Key was still being performed when the wait for it ended
    /// (`IdempotencyGate.longestWait`): the same request sent again later gets its answer.
    case idempotencyInProgress
    /// A store's broadcast channel request refused (docs/broadcast.md).
    case broadcast(BroadcastRefusal)
    /// The caller's role may not do this; `allowed` are the roles that may.
    case forbidden(role: Role, allowed: Set<Role>)
    /// A key limited to some stores asked to erase a customer, which reaches every store of the tenant.
    case erasureNeedsWholeTenant

    public var code: String {
        switch self {
        case .invalidField: "invalid_field"
        case .invalidValue: "invalid_value"
        case .unknownApp: "unknown_app"
        case .unknownAPNsKey: "unknown_apns_key"
        case .unknownAPIKey: "unknown_api_key"
        case .apiKeyRevoked: "api_key_revoked"
        case .invalidAPNsKey: "invalid_apns_key"
        case .masterKeyNotConfigured, .webhookSecretNeedsMasterKey: "master_key_not_configured"
        case .webhookAddressRefused: "webhook_address_refused"
        case .unknownWebhook: "unknown_webhook"
        case .unknownWebhookDelivery: "unknown_webhook_delivery"
        case .webhookDeliveryNotDead: "webhook_delivery_not_dead"
        case .webhookDisabled: "webhook_disabled"
        case .idempotencyInProgress: "idempotency_in_progress"
        case .broadcast(let refusal): refusal.code
        case .forbidden, .erasureNeedsWholeTenant: "forbidden"
        }
    }
}

extension ServiceError: CustomStringConvertible {
    public var description: String { "ServiceError(\(code))" }
}
