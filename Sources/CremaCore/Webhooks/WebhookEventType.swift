/// What a webhook endpoint can subscribe to (docs/webhooks.md); the raw values are the published `type` names.
public enum WebhookEventType: String, Sendable, Hashable, Codable, CaseIterable {
    /// An order accepted an event: the order as it is after it.
    case orderChanged = "order.changed"
    /// A push ran out of attempts or was refused for good by APNs.
    case deliveryDead = "delivery.dead"
    /// APNs said a device token is gone; Crema stopped using it.
    case tokenRetired = "token.retired"
    /// An order ended (picked up, canceled or expired), and with it its Live Activity.
    case activityEnded = "activity.ended"
}
