public import CremaAPNsProtocol
public import Foundation

/// One row of an order's event history, as stored and shown by `GET /v1/orders/{id}`.
public struct RecordedEvent: Sendable, Hashable {
    public var version: Int
    public var type: OrderEventType
    public var role: Role
    public var occurredAt: Date
    /// What the event carried, keyed by API field names.
    public var data: JSONValue

    public init(version: Int, type: OrderEventType, role: Role, occurredAt: Date, data: JSONValue) {
        self.version = version
        self.type = type
        self.role = role
        self.occurredAt = occurredAt
        self.data = data
    }
}
