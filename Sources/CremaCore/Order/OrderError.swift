/// Why the core refused a command; each case has a stable, machine-readable `code` for the API.
public enum OrderError: Error, Sendable, Hashable {
    /// The event is not allowed from the order's current state.
    case invalidTransition(from: OrderState, event: OrderEventType, allowed: [OrderEventType])
    /// The caller saw another version of the order than the one stored.
    case versionConflict(expected: Int, actual: Int, state: OrderState)
    /// A field is well-formed but its value is not acceptable (length, range, time window).
    case invalidValue(field: String, reason: String)

    public var code: String {
        switch self {
        case .invalidTransition: "invalid_transition"
        case .versionConflict: "version_conflict"
        case .invalidValue: "invalid_value"
        }
    }

    /// A sentence for people; holds no customer data, so it is safe to log.
    public var message: String {
        switch self {
        case .invalidTransition(let from, let event, let allowed):
            let options = allowed.isEmpty ? "none: the order is finished" : allowed.map(\.rawValue).joined(separator: ", ")
            return "An order that is \(from.rawValue) cannot be \(event.rawValue); allowed now: \(options)."
        case .versionConflict(let expected, let actual, let state):
            return "The order changed: you saw version \(expected), it is now version \(actual) (\(state.rawValue))."
        case .invalidValue(let field, let reason):
            return "Field '\(field)' \(reason)."
        }
    }
}
