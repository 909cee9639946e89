public import Foundation

/// The numbers behind delivery planning. Apple publishes none of the budgets (docs/apns.md §9.16), so these
/// are conservative choices, documented in docs/delivery.md, and configurable per deployment.
public struct DeliveryPolicy: Sendable, Hashable {
    /// The bundle ID used with the built-in simulator when no `CREMA_APNS_TOPIC` is set.
    public static let exampleBundleID = "cafe.crema.example"

    /// Priority-10 Live Activity pushes per activity per rolling hour before falling back to priority 5.
    public var highPriorityPerActivityPerHour: Int
    /// A push-back of the ETA at least this large is news the customer must see now.
    public var largeDelay: TimeInterval
    /// Widget pushes per token are at least this far apart; changes in between coalesce into one.
    public var widgetMinimumInterval: TimeInterval
    /// Widget pushes per token per rolling 24 hours.
    public var widgetDailyCap: Int
    /// How long APNs (and the dispatcher) keep trying each kind of push.
    public var updateLifetime: TimeInterval
    public var endLifetime: TimeInterval
    public var startLifetime: TimeInterval
    public var alertLifetime: TimeInterval
    public var widgetLifetime: TimeInterval

    public init(
        highPriorityPerActivityPerHour: Int = 6,
        largeDelay: TimeInterval = 5 * 60,
        widgetMinimumInterval: TimeInterval = 5 * 60,
        widgetDailyCap: Int = 24,
        updateLifetime: TimeInterval = 30 * 60,
        endLifetime: TimeInterval = 4 * 60 * 60,
        startLifetime: TimeInterval = 15 * 60,
        alertLifetime: TimeInterval = 60 * 60,
        widgetLifetime: TimeInterval = 60 * 60
    ) {
        self.highPriorityPerActivityPerHour = highPriorityPerActivityPerHour
        self.largeDelay = largeDelay
        self.widgetMinimumInterval = widgetMinimumInterval
        self.widgetDailyCap = widgetDailyCap
        self.updateLifetime = updateLifetime
        self.endLifetime = endLifetime
        self.startLifetime = startLifetime
        self.alertLifetime = alertLifetime
        self.widgetLifetime = widgetLifetime
    }
}
