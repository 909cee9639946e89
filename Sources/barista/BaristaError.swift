import CremaAPI
import CremaAPNsProtocol
import CremaCore

/// A failure `barista` explains in one line that says what to do, with the exit status scripts rely on.
struct BaristaError: Error, Sendable, CustomStringConvertible {
    var status: ExitStatus
    var message: String
    /// The API's error code when the server answered with one (`version_conflict`, `unknown_order`, …).
    var code: String?
    /// What the order looks like now, when a change was refused (for `--json`).
    var current: OrderResponse?
    /// The connection was refused, so the request never left: retrying at once would only be refused again.
    var nothingSent = false

    init(_ status: ExitStatus, _ message: String, code: String? = nil, current: OrderResponse? = nil) {
        self.status = status
        self.message = message
        self.code = code
        self.current = current
    }

    var description: String { message }
}

/// An error answer from Crema: `{"error":{"code","message","details"}}` and its HTTP status.
struct APIFailure: Error, Sendable {
    var httpStatus: Int
    var code: String
    var message: String
    var details: JSONValue

    /// The generic reading of an error answer; commands handle the codes they expect (409s, 404s) first.
    func asBaristaError(server: String) -> BaristaError {
        switch (httpStatus, code) {
        case (401, _):
            return BaristaError(
                .forbidden, "Crema refused the key: set CREMA_BARISTA_KEY (or key = … in the config file) to the barista key.",
                code: code)
        case (403, _):
            let role = details["role"]?.stringValue.map { "a \($0) key" } ?? "not a barista key"
            return BaristaError(
                .forbidden, "Crema refused this with the configured key (it is \(role)): set CREMA_BARISTA_KEY to the barista key.",
                code: code)
        case (404, "unknown_store"):
            let store = details["store_id"]?.stringValue ?? "?"
            return BaristaError(.notFound, "There is no store '\(store)' on \(server): check --store or CREMA_STORE.", code: code)
        case (404, "unknown_order"):
            return BaristaError(.notFound, "There is no such order: check the number or id (barista queue lists open orders).", code: code)
        case (404, _):
            return BaristaError(.failure, "\(server) does not answer this route: is it a Crema server, and is it up to date?", code: code)
        case (400, _), (422, _):
            return BaristaError(.refused, "Crema refused the request: \(message)", code: code)
        case (503, _):
            return BaristaError(.unavailable, "Crema is up but its database is not: try again in a moment. (\(message))", code: code)
        default:
            return BaristaError(.failure, "Crema answered \(httpStatus) \(code): \(message)", code: code)
        }
    }
}

extension JSONValue {
    /// A short human rendering of a scalar (arrays and objects are summarised).
    var brief: String {
        switch self {
        case .null: "—"
        case .bool(let value): String(value)
        case .number(let value): value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .string(let value): value
        case .array(let values): values.map(\.brief).joined(separator: ", ")
        case .object(let object): "{\(object.count) fields}"
        }
    }
}
