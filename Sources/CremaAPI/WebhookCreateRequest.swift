/// `POST /v1/webhooks`: where to send, and which event types (`order.changed`, `delivery.dead`, `token.retired`,
/// `activity.ended`). Types stay strings here so an unknown one is refused by name.
public struct WebhookCreateRequest: Codable, Sendable, Hashable {
    public var url: String
    public var events: [String]

    public init(url: String, events: [String]) {
        self.url = url
        self.events = events
    }
}
