public import CremaAPI
import CremaCore
import CremaService
import Foundation
public import Hummingbird
import NIOCore

extension APIError {
    /// Seconds a client should wait before retrying, for 503.
    static let retryAfterSeconds = 2

    /// Maps any error thrown while handling a request onto the API's vocabulary.
    public init(_ error: any Error, uploadLimit: Int) {
        switch error {
        case let error as APIError: self = error
        case let error as StoreError:
            switch error {
            case .unknownOrder: self = .unknownOrder
            case .unknownStore(let id): self = .unknownStore(id)
            case .unknownTenant(let id): self = .unknownTenant(id)
            case .unknownApp(let id): self = .unknownApp(id)
            case .appRequired: self = .appRequired("This tenant has no app yet: create one with PUT /v1/admin/tenants/{tenant}/apps/{bundle_id} before registering tokens.")
            case .idempotencyMismatch: self = .idempotencyMismatch
            case .rejected(let reason): self = .order(reason)
            case .invalidTimezone(let zone): self = .order(.invalidValue(field: "timezone", reason: "'\(zone)' is not an IANA time zone"))
            case .invalidCursor: self = .invalidField(field: "cursor", reason: "is not a cursor this API returned")
            case .limitReached(let name, let limit): self = .limitReached(name, limit: limit)
            case .database(let failure): self = failure.isUnavailable ? .databaseUnavailable : .internalError
            }
        case let error as ServiceError: self = APIError(error)
        case let error as PostgresError: self = error.isUnavailable ? .databaseUnavailable : .internalError
        case is NIOTooManyBytesError: self = .payloadTooLarge(limit: uploadLimit)
        case let error as HTTPError where error.status == .notFound: self = .notFound
        case let error as HTTPError where error.status == .contentTooLarge: self = .payloadTooLarge(limit: uploadLimit)
        default: self = .internalError
        }
    }
}

extension APIError {
    /// The application layer's refusal as the API answers it: the same code, with its status, sentence and details.
    init(_ error: ServiceError) {
        switch error {
        case .invalidField(let field, let reason): self = .invalidField(field: field, reason: reason)
        case .invalidValue(let field, let reason): self = .order(.invalidValue(field: field, reason: reason))
        case .unknownApp(let id): self = .unknownApp(id)
        case .unknownAPNsKey(let id): self = .unknownAPNsKey(id)
        case .unknownAPIKey(let id): self = .unknownAPIKey(id)
        case .apiKeyRevoked: self = .apiKeyRevoked
        case .invalidAPNsKey(let reason): self = .invalidAPNsKey(reason)
        case .masterKeyNotConfigured: self = .masterKeyNotConfigured
        case .webhookSecretNeedsMasterKey: self = .webhookSecretNeedsMasterKey
        case .webhookAddressRefused(let host, let reason): self = .webhookAddressRefused(host: host, reason: reason)
        case .unknownWebhook: self = .unknownWebhook
        case .unknownWebhookDelivery: self = .unknownWebhookDelivery
        case .webhookDeliveryNotDead(let state): self = .webhookDeliveryNotDead(state: state)
        case .webhookDisabled: self = .webhookDisabled
        case .idempotencyInProgress: self = .idempotencyInProgress
        case .broadcast(let refusal): self = .broadcast(refusal)
        case .forbidden(let role, let allowed): self = .forbidden(role: role, allowed: allowed)
        case .erasureNeedsWholeTenant: self = .erasureNeedsWholeTenant
        }
    }
}

extension APIError: HTTPResponseError {
    /// The status with its reason phrase (`HTTPResponse.Status(code:)` alone has none, and the status line would
    /// read `HTTP/1.1 405 `).
    public var status: HTTPResponse.Status {
        switch statusCode {
        case 400: .badRequest
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 405: .methodNotAllowed
        case 409: .conflict
        case 413: .contentTooLarge
        case 422: .unprocessableContent
        case 429: .tooManyRequests
        case 431: .requestHeaderFieldsTooLarge
        case 500: .internalServerError
        case 503: .serviceUnavailable
        default: HTTPResponse.Status(code: statusCode)
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if self == .databaseUnavailable { headers[.retryAfter] = String(Self.retryAfterSeconds) }
        if self == .idempotencyInProgress { headers[.retryAfter] = "1" }
        if case .broadcast(.apnsUnavailable) = self { headers[.retryAfter] = String(Self.retryAfterSeconds) }
        if case .rateLimited(let seconds) = self { headers[.retryAfter] = String(seconds) }
        if self == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if case .customerToken = self { headers[.wwwAuthenticate] = #"Bearer error="invalid_token""# }
        if case .methodNotAllowed(let allowed) = self { headers[.allow] = allowed.joined(separator: ", ") }
        return Response(
            status: status, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: try WireCoding.encoder.encode(document))))
    }
}
