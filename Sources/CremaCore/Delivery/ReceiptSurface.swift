/// How Crema knows a push reached the phone: posted by the app (`notification`, `activity`, `app`: observed), or
/// inferred from what the app did next (`activityToken`, `widgetFetch`). The funnel keeps the two apart, because an
/// inferred receipt is evidence, not a report (docs/tutorial-app.md "Receipts").
public enum ReceiptSurface: String, Sendable, Hashable, Codable, CaseIterable {
    /// The app's Notification Service Extension saw an alert (or a Live Activity push's alert) before it showed.
    case notification
    /// The app saw a Live Activity's new content (`Activity.contentUpdates`) while it ran.
    case activity
    /// The app's own code handled the push some other way (`application(_:didReceiveRemoteNotification:…)`).
    case app
    /// Inferred: a push-to-start's activity registered its update token.
    case activityToken = "activity_token"
    /// Inferred: the customer's widget asked for its data after a widget push.
    case widgetFetch = "widget_fetch"

    /// The surfaces an app may post; the inferred ones are Crema's alone.
    public static let posted: [ReceiptSurface] = [.notification, .activity, .app]
}
