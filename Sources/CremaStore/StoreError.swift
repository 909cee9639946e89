public import CremaCore
public import CremaPostgres

/// Why a store operation failed; `code` is the stable API error code.
public enum StoreError: Error, Sendable, Equatable {
    case unknownOrder
    case unknownStore(String)
    case unknownTenant(String)
    case unknownApp(String)
    /// A token registered for a tenant that has no app yet.
    case appRequired
    /// The Idempotency-Key was used before with another request.
    case idempotencyMismatch
    /// The core refused the command.
    case rejected(OrderError)
    case invalidTimezone(String)
    case invalidCursor
    /// A count limit (docs/limits.md) would be passed: `limit` is the number in force for the caller's tenant.
    case limitReached(LimitName, limit: Int)
    /// The database failed; `isUnavailable` tells whether it is worth retrying later.
    case database(PostgresError)

    public var code: String {
        switch self {
        case .unknownOrder: "unknown_order"
        case .unknownStore: "unknown_store"
        case .unknownTenant: "unknown_tenant"
        case .unknownApp: "unknown_app"
        case .appRequired: "app_required"
        case .idempotencyMismatch: "idempotency_mismatch"
        case .rejected(let error): error.code
        case .invalidTimezone: "invalid_value"
        case .invalidCursor: "invalid_field"
        case .limitReached: "limit_reached"
        case .database(let error): error.isUnavailable ? "database_unavailable" : "internal_error"
        }
    }
}

extension StoreError: CustomStringConvertible {
    /// The code, and for a database failure its kind and SQLSTATE only: safe at any log level. Without it, string
    /// interpolation printed the payload's debug form, and a PostgreSQL message can quote a row's values.
    public var description: String {
        switch self {
        case .database(let error): "StoreError(\(code), \(error))"
        case .limitReached(let name, let limit): "StoreError(\(code), \(name.rawValue) \(limit))"
        default: "StoreError(\(code))"
        }
    }
}
