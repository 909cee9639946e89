public import Foundation

/// A live webhook endpoint of the tenant that wants an event an order command writes in the command's store, as the
/// command's first round trip read it (`WebhookOutbox.endpointsColumn`): the write queues its deliveries by name.
public struct WantingEndpoint: Sendable, Hashable, Decodable {
    public var id: UUID
    /// The event types it wants (`WebhookEventType` raw values).
    public var events: [String]
}
