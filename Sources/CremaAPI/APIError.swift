public import CremaAPNsProtocol
public import CremaCore

/// Every error the API answers with: a stable `code`, an HTTP status, a sentence and structured details,
/// sent as `{"error":{"code","message","details"}}`.
public enum APIError: Error, Sendable, Equatable {
    /// The body is not JSON; where it stopped being JSON when that can be said (JSONSyntaxScanner).
    case malformedJSON(JSONSyntaxError?)
    case invalidField(field: String, reason: String)
    case missingIdempotencyKey
    case unauthorized
    case forbidden(role: Role, allowed: Set<Role>)
    /// A customer token (JWT) that was presented and refused: 401 with the refusal's own code.
    case customerToken(CustomerTokenRefusal)
    /// A `/v1/me` route called with an API key: those routes act for one customer, named by a customer token.
    case customerTokenRequired
    /// A customer token on a route of the shop's roles.
    case customerForbidden
    case notFound
    case methodNotAllowed(allowed: [String])
    case unknownOrder
    case unknownStore(String)
    /// A tenant the caller cannot see: unknown, or another tenant's (docs/tenants.md).
    case unknownTenant(String)
    /// A store the caller's key may see but not change, or may not create (a key limited to other stores).
    case storeNotPermitted(String)
    /// An API key Crema generated that has expired or been revoked: 401 with its own code, so the client knows to
    /// ask for a new key rather than retry.
    case apiKeyExpired
    case apiKeyRevoked
    /// A stream ticket that is spent, expired, unknown or for another store: 401 with its own code, so a page knows to
    /// ask for a new ticket rather than to fix its API key.
    case streamTicketInvalid
    case unknownApp(String)
    case unknownAPNsKey(String)
    case unknownAPIKey(String)
    /// A `.p8` that is not a P-256 private key in PEM, or a Key/Team ID of the wrong shape.
    case invalidAPNsKey(String)
    /// A `.p8` by file path from a tenant's own admin key: a path reads files on the server, so only the bootstrap key
    /// (or `crema admin`, run on the server) may name one.
    case p8PathNotPermitted
    /// Storing a `.p8` in the database needs CREMA_MASTER_KEY, which this instance was not given.
    case masterKeyNotConfigured
    /// The tenant has no customer token settings yet.
    case customerTokensNotConfigured
    /// Tokens belong to an app: the tenant has none yet (or several and the request named none).
    case appRequired(String)
    /// DELETE of a token that is not registered (or was already retired).
    case unknownToken
    /// An erasure naming a customer the tenant has no order or token of (never a silent success).
    case customerNotFound
    /// An erasure with a key limited to some stores: erasure reaches every store of the tenant.
    case erasureNeedsWholeTenant
    /// A webhook URL that resolves to a private, loopback or reserved address (allowed only with
    /// `CREMA_WEBHOOK_ALLOW_PRIVATE=1`), or whose host does not resolve.
    case webhookAddressRefused(host: String, reason: String)
    /// Signing secrets are sealed like `.p8` keys: webhooks need `CREMA_MASTER_KEY`.
    case webhookSecretNeedsMasterKey
    case unknownWebhook
    case unknownWebhookDelivery
    /// Only a dead delivery is sent again on request.
    case webhookDeliveryNotDead(state: String)
    /// The endpoint answered 410 Gone and was disabled: register it again to receive events.
    case webhookDisabled
    case order(OrderError)
    case idempotencyMismatch
    /// Another request with the key was still being performed when the wait for it ended (administrative and webhook
    /// POSTs, which claim their key first: `IdempotencyGate`).
    case idempotencyInProgress
    /// A store's broadcast channel request refused (docs/broadcast.md).
    case broadcast(BroadcastRefusal)
    case payloadTooLarge(limit: Int)
    /// A count limit of the caller's tenant (docs/limits.md) would be passed: 409, `details.limit` names it.
    case limitReached(LimitName, limit: Int)
    /// The caller (an API key, or a customer) sent more than its rate allows: 429 with `Retry-After`.
    case rateLimited(retryAfter: Int)
    /// A tenant's own admin key tried to set its tenant's limits: only the operator's bootstrap key may.
    case limitsNeedOperator
    case databaseUnavailable
    case internalError

    public var code: String {
        switch self {
        case .malformedJSON: "malformed_json"
        case .invalidField: "invalid_field"
        case .missingIdempotencyKey: "missing_idempotency_key"
        case .unauthorized: "unauthorized"
        case .forbidden, .customerForbidden: "forbidden"
        case .customerToken(let refusal): refusal.code
        case .customerTokenRequired: "customer_token_required"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .unknownOrder: "unknown_order"
        case .unknownStore: "unknown_store"
        case .unknownTenant: "unknown_tenant"
        case .storeNotPermitted: "store_not_permitted"
        case .apiKeyExpired: "api_key_expired"
        case .apiKeyRevoked: "api_key_revoked"
        case .streamTicketInvalid: "invalid_stream_ticket"
        case .unknownApp: "unknown_app"
        case .unknownAPNsKey: "unknown_apns_key"
        case .unknownAPIKey: "unknown_api_key"
        case .invalidAPNsKey: "invalid_apns_key"
        case .p8PathNotPermitted: "p8_path_not_permitted"
        case .masterKeyNotConfigured: "master_key_not_configured"
        case .appRequired: "app_required"
        case .customerTokensNotConfigured: "customer_tokens_not_configured"
        case .unknownToken: "unknown_token"
        case .customerNotFound: "customer_not_found"
        case .erasureNeedsWholeTenant: "forbidden"
        case .webhookAddressRefused: "webhook_address_refused"
        case .webhookSecretNeedsMasterKey: "master_key_not_configured"
        case .unknownWebhook: "unknown_webhook"
        case .unknownWebhookDelivery: "unknown_webhook_delivery"
        case .webhookDeliveryNotDead: "webhook_delivery_not_dead"
        case .webhookDisabled: "webhook_disabled"
        case .order(let error): error.code
        case .idempotencyMismatch: "idempotency_mismatch"
        case .idempotencyInProgress: "idempotency_in_progress"
        case .broadcast(let refusal): refusal.code
        case .payloadTooLarge: "payload_too_large"
        case .limitReached: "limit_reached"
        case .rateLimited: "rate_limited"
        case .limitsNeedOperator: "forbidden"
        case .databaseUnavailable: "database_unavailable"
        case .internalError: "internal_error"
        }
    }

    /// The HTTP status this error is answered with.
    public var statusCode: Int {
        switch self {
        case .malformedJSON, .invalidField, .missingIdempotencyKey: 400
        case .unauthorized, .customerToken, .apiKeyExpired, .apiKeyRevoked, .streamTicketInvalid: 401
        case .forbidden, .customerTokenRequired, .customerForbidden, .storeNotPermitted, .p8PathNotPermitted, .erasureNeedsWholeTenant: 403
        case .notFound, .unknownOrder, .unknownStore, .unknownToken, .unknownTenant, .unknownApp, .unknownAPNsKey, .unknownAPIKey,
            .customerTokensNotConfigured, .customerNotFound: 404
        case .masterKeyNotConfigured, .appRequired, .webhookSecretNeedsMasterKey, .webhookDeliveryNotDead, .webhookDisabled: 409
        case .webhookAddressRefused: 422
        case .unknownWebhook, .unknownWebhookDelivery: 404
        case .invalidAPNsKey: 422
        case .methodNotAllowed: 405
        case .order(.invalidTransition), .order(.versionConflict), .idempotencyInProgress: 409
        case .broadcast(let refusal): refusal.statusCode
        case .order(.invalidValue), .idempotencyMismatch: 422
        case .payloadTooLarge: 413
        case .limitReached: 409
        case .rateLimited: 429
        case .limitsNeedOperator: 403
        case .databaseUnavailable: 503
        case .internalError: 500
        }
    }

    /// "an app", "a pos": the article English wants before a role's name.
    static func withArticle(_ word: String, capitalized: Bool = false) -> String {
        let article = "aeiou".contains(word.first ?? "x") ? "an" : "a"
        return (capitalized ? article.prefix(1).uppercased() + article.dropFirst() : article) + " " + word
    }

    /// The error document, `{"error":{"code","message","details"}}`.
    public var document: APIErrorDocument { APIErrorDocument(code: code, message: message, details: details) }

    public var message: String {
        switch self {
        case .malformedJSON(let error?): "The request body is not valid JSON: \(error.sentence)."
        case .malformedJSON(nil): "The request body is not valid JSON."
        case .invalidField(let field, let reason): "Field '\(field)' \(reason)."
        case .missingIdempotencyKey: "Every POST needs an Idempotency-Key header (1–255 printable ASCII characters)."
        case .unauthorized: "Send a valid API key as 'Authorization: Bearer <key>'."
        case .forbidden(let role, let allowed):
            "\(Self.withArticle(role.rawValue, capitalized: true)) key cannot do this; it needs "
                + "\(allowed.sorted().map { Self.withArticle($0.rawValue) }.joined(separator: " or ")) key."
        case .customerToken(let refusal): refusal.message
        case .customerTokenRequired: "The /v1/me routes act for one customer: send 'Authorization: Bearer <customer JWT>'."
        case .customerForbidden: "A customer token can use the /v1/me routes only."
        case .notFound: "There is no such route; see /openapi.yaml."
        case .methodNotAllowed(let allowed): "This path answers \(allowed.joined(separator: ", ")) only."
        case .unknownOrder: "There is no order with this id."
        case .unknownToken: "No such token is registered (it may have been retired after APNs refused it)."
        case .customerNotFound: "This tenant has no order or token of this customer (an erased customer is no longer known)."
        case .erasureNeedsWholeTenant: "A key limited to some stores cannot erase a customer: erasure reaches every store of the tenant."
        case .unknownStore(let id): "There is no store '\(id)'; create it with PUT /v1/stores/\(id)."
        case .unknownTenant(let id): "There is no tenant '\(id)' that this key can see."
        case .storeNotPermitted(let id): "This key is limited to other stores and cannot change store '\(id)'."
        case .apiKeyExpired: "This API key has expired; ask the tenant's administrator for a new one."
        case .apiKeyRevoked: "This API key was revoked; use the key that replaced it."
        case .streamTicketInvalid:
            "This stream ticket is spent, expired or for another store (a ticket opens one store's stream once, within a minute); "
                + "get a new one with POST /v1/stream/tickets and the dashboard key."
        case .unknownApp(let id): "There is no app '\(id)' in this tenant; create it with PUT /v1/admin/tenants/{tenant}/apps/\(id)."
        case .unknownAPNsKey(let id): "There is no APNs key '\(id)' for this app."
        case .unknownAPIKey(let id): "There is no API key '\(id)' in this tenant."
        case .invalidAPNsKey(let reason): "The APNs key cannot be used: \(reason)."
        case .p8PathNotPermitted:
            "Only the bootstrap admin key (CREMA_ADMIN_KEY) or crema admin may register a key by file path; send the PEM as \"p8\"."
        case .masterKeyNotConfigured:
            "Storing a .p8 key needs CREMA_MASTER_KEY (base64 of 32 random bytes) on this instance; or register the key by file path (\"p8_path\")."
        case .appRequired(let reason): reason
        case .webhookAddressRefused(let host, let reason): "The webhook host '\(host)' cannot receive webhooks: \(reason)."
        case .webhookSecretNeedsMasterKey:
            "Webhook signing secrets are stored sealed: this instance needs CREMA_MASTER_KEY (base64 of 32 random bytes) to register one."
        case .unknownWebhook: "There is no webhook endpoint with this id that this key can see."
        case .unknownWebhookDelivery: "This webhook endpoint has no delivery with this id."
        case .webhookDeliveryNotDead(let state): "Only a dead delivery can be replayed; this one is \(state)."
        case .webhookDisabled: "This endpoint answered 410 Gone and was disabled; register the URL again to receive events."
        case .customerTokensNotConfigured: "This tenant has no customer token settings; set them with PUT /v1/admin/tenants/{tenant}/customer-tokens."
        case .order(let error): error.message
        case .idempotencyMismatch: "This Idempotency-Key was already used for a different request; use a new key."
        case .idempotencyInProgress:
            "A request with this Idempotency-Key is still being performed: retry after the Retry-After delay with the same key for its answer."
        case .broadcast(let refusal): refusal.message
        case .payloadTooLarge(let limit): "The request body is larger than \(limit / 1024) KiB."
        case .limitReached(let name, let limit):
            switch name {
            case .tokensPerCustomer:
                "This customer already holds \(limit) tokens of this kind: unregister one (or name it in \"replaces\") before adding another."
            case .streamsPerKey: "This API key already holds \(limit) open streams: close one before opening another."
            case .webhooks: "This tenant already has \(limit) webhook endpoints: delete one before registering another."
            case .eventsPerOrder:
                "This order already holds as many events as it may (\(limit), the last kept for its end): it can only be picked up or canceled."
            case .rate: "This caller is over its request rate."
            }
        case .limitsNeedOperator:
            "A tenant's limits protect the other tenants from it: only the operator's bootstrap key (CREMA_ADMIN_KEY) may set them."
        case .rateLimited(let seconds): "Too many requests from this caller: retry after \(seconds) s (the Retry-After header)."
        case .databaseUnavailable:
            "The database is unavailable. A write may or may not have been applied: retry after the Retry-After delay with the same Idempotency-Key."
        case .internalError: "Something went wrong inside Crema; nothing was written."
        }
    }

    public var details: JSONValue {
        switch self {
        case .invalidField(let field, let reason): ["field": .string(field), "reason": .string(reason)]
        case .malformedJSON(let error?):
            [
                "line": .number(Double(error.line)), "column": .number(Double(error.column)), "offset": .number(Double(error.offset)),
                "expected": .string(error.expected),
            ]
        case .forbidden(let role, let allowed):
            ["role": .string(role.rawValue), "allowed_roles": .array(allowed.sorted().map { .string($0.rawValue) })]
        case .unknownStore(let id), .storeNotPermitted(let id): ["store_id": .string(id)]
        case .unknownTenant(let id): ["tenant": .string(id)]
        case .unknownApp(let id): ["bundle_id": .string(id)]
        case .unknownAPNsKey(let id): ["key_id": .string(id)]
        case .unknownAPIKey(let id): ["id": .string(id)]
        case .webhookAddressRefused(let host, let reason): ["host": .string(host), "reason": .string(reason)]
        case .webhookDeliveryNotDead(let state): ["state": .string(state)]
        case .order(.invalidTransition(let from, let event, let allowed)):
            ["from": .string(from.rawValue), "event": .string(event.rawValue), "allowed": .array(allowed.map { .string($0.rawValue) })]
        case .order(.versionConflict(let expected, let actual, let state)):
            ["expected": .number(Double(expected)), "actual": .number(Double(actual)), "state": .string(state.rawValue)]
        case .order(.invalidValue(let field, let reason)): ["field": .string(field), "reason": .string(reason)]
        case .payloadTooLarge(let limit): ["limit_bytes": .number(Double(limit))]
        case .limitReached(let name, let limit): ["limit": .string(name.rawValue), "value": .number(Double(limit))]
        case .rateLimited(let seconds): ["limit": .string(LimitName.rate.rawValue), "retry_after_seconds": .number(Double(seconds))]
        case .methodNotAllowed(let allowed): ["allowed_methods": .array(allowed.map(JSONValue.string))]
        case .broadcast(.storageConflict(let current)): ["storage": .string(current)]
        case .broadcast(.channelMismatch(let field, let current)): ["field": .string(field), "current": .string(current)]
        case .broadcast(.bundleRequired(let apps)): ["bundle_ids": .array(apps.map(JSONValue.string))]
        case .broadcast(.apnsRefused(let status, let reason)): ["apns_status": .number(Double(status)), "apns_reason": .string(reason)]
        default: [:]
        }
    }
}

/// `{"error":{"code","message","details"}}`: what every error answer carries, for the server to write and
/// clients to read.
public struct APIErrorDocument: Codable, Sendable, Hashable {
    /// The inside of the document.
    public struct Body: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
        public var details: JSONValue?
    }

    public var error: Body

    public init(code: String, message: String, details: JSONValue) {
        error = Body(code: code, message: message, details: details)
    }
}
