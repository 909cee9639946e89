/// Why a push was planned or skipped: stable machine-readable codes (stored with each outbox row and shown by
/// `GET /v1/orders/{id}/deliveries`); the sentence beside each code is for people and may change.
public enum DeliveryReason: String, Sendable, Hashable, Codable, CaseIterable {
    // MARK: Planned
    /// A routine step on a running Live Activity: a silent update at priority 5.
    case activityUpdate = "activity_update"
    /// The customer must look now (ready, a large delay): priority 10 with an alert.
    case activityUpdateUrgent = "activity_update_urgent"
    /// Urgent, but the activity's priority-10 budget is spent: priority 5, the alert goes separately.
    case activityUpdateBudgetSpent = "activity_update_budget_spent"
    /// The app said the customer turned frequent updates off: this change does not have to wake them (only `ready`
    /// and `canceled` do), so priority 5, an alert it carries kept inside.
    case activityUpdateFrequentUpdatesOff = "activity_update_frequent_updates_off"
    /// Picked up or canceled: the activity ends, with a dismissal date.
    case activityEnd = "activity_end"
    /// No running activity but a push-to-start token: start one.
    case activityStart = "activity_start"
    /// No Live Activity at all: an alert for a moment that matters.
    case alertNoActivity = "alert_no_activity"
    /// The activity got a priority-5 update because its budget was spent: the alert goes on its own.
    case alertBudgetFallback = "alert_budget_fallback"
    /// A start was sent but the app has not registered the activity's token yet: alert instead.
    case alertActivityPending = "alert_activity_pending"
    /// What a widget shows changed: reload its timeline.
    case widgetChanged = "widget_changed"
    /// The order's relevance interval moved (a delay, a late `ready`): reload so the watch asks for it again.
    case widgetRelevanceChanged = "widget_relevance_changed"
    /// What a widget shows changed, but it was pushed recently: send once the minimum interval has passed.
    case widgetDeferred = "widget_deferred"

    // MARK: Skipped
    /// The order's customer registered no token at all.
    case noTargets = "no_targets"
    /// The Live Activity update carries this alert; a second notification would repeat it (HIG).
    case alertShownInActivity = "alert_shown_in_activity"
    /// A routine step: not worth interrupting the customer.
    case alertNotNeeded = "alert_not_needed"
    /// An alert was wanted but the customer has no alert token.
    case noAlertTarget = "no_alert_target"
    /// The activity already received its `end`; nothing more may follow.
    case activityAlreadyEnded = "activity_already_ended"
    /// A start for this order already went out; the app will register the activity's update token.
    case activityStartPending = "activity_start_pending"
    /// The order is finished: starting an activity now would only show an ended order.
    case startNotUseful = "start_not_useful"
    /// This step changes neither what a widget shows nor when the order is relevant (`RelevanceInterval`).
    case widgetUnchanged = "widget_unchanged"
    /// A widget push is already waiting for this token; when it goes, the widget reloads with this change.
    case widgetCoalesced = "widget_coalesced"
    /// The token's daily widget budget is used up.
    case widgetDailyCap = "widget_daily_cap"

    // MARK: Withdrawn at send time (DeliveryOrdering)
    /// A newer push for the same activity was planned; this one would only show an older state.
    case supersededByNewer = "superseded_by_newer"
    /// The activity's `end` was planned after this push: nothing may reach the activity after its end.
    case supersededByEnd = "superseded_by_end"
    /// The order was picked up or canceled before this start went out: it would show a finished order.
    case startOrderFinished = "start_order_finished"
    /// The app registered the started activity's token before this (repeated) start went out.
    case startActivityRegistered = "start_activity_registered"
}
