import CremaAPNsProtocol
import Foundation

/// Decides, for one order change, how each of the customer's devices hears about it (docs/design.md §5): a Live
/// Activity update, start or end, an alert, a widget reload, or a recorded reason not to. Pure: the same
/// context always gives the same plan.
public enum DeliveryPlanner {
    public static func plan(_ context: DeliveryContext, policy: DeliveryPolicy) -> DeliveryPlan {
        var planning = Planning(context: context, policy: policy)
        planning.run()
        return planning.plan
    }

    /// The events whose news the customer must see now. A delay counts when it pushes the ETA back by at
    /// least `policy.largeDelay`.
    public static func isUrgent(_ context: DeliveryContext, policy: DeliveryPolicy) -> Bool {
        switch context.event {
        case .ready, .canceled: true
        case .delayed: context.previous.map { context.order.eta.timeIntervalSince($0.eta) >= policy.largeDelay } ?? false
        // Nobody has to act on an order that waited too long: its activity ends quietly, without an alert.
        case .placed, .started, .pickedUp, .expired: false
        }
    }

    /// The events that change what a widget shows: an order appears, becomes ready, or goes away.
    public static func changesWidgets(_ event: OrderEventType) -> Bool {
        switch event {
        case .placed, .ready, .pickedUp, .canceled, .expired: true
        case .started, .delayed: false
        }
    }

    /// The urgent changes that still go at priority 10 when the customer turned frequent updates off
    /// (docs/delivery.md, "Frequent updates off"): the drink is waiting at the counter, or it will not come; either
    /// way they act now. A delay, however large, only asks them to wait longer: it goes at priority 5, its alert inside.
    public static func wakesCustomer(_ event: OrderEventType) -> Bool {
        switch event {
        case .ready, .canceled: true
        case .placed, .started, .delayed, .pickedUp, .expired: false
        }
    }
}

/// One run of the planner: walks the targets in a fixed order (activity, push-to-start, alert, widget),
/// because whether an alert is needed depends on what the activity pushes already carry.
private struct Planning {
    let context: DeliveryContext
    let policy: DeliveryPolicy
    var plan: DeliveryPlan
    /// Some activity push (update, end or start) carries this change's alert.
    var alertCarried = false
    /// Why a separate alert is needed even though an activity exists.
    var separateAlertReason: DeliveryReason?

    init(context: DeliveryContext, policy: DeliveryPolicy) {
        self.context = context
        self.policy = policy
        // Projected once: every activity push of this change carries it, and the store keeps it with the order.
        plan = DeliveryPlan(
            projection: OrderProjector.contentState(
                order: context.order, storeName: context.storeName, timeZone: context.timeZone, now: context.now,
                locale: context.order.locale))
    }

    var order: Order { context.order }
    var now: Date { context.now }
    var urgent: Bool { DeliveryPlanner.isUrgent(context, policy: policy) }
    var eventName: String { context.event.rawValue }

    func targets(_ kind: PushTargetKind) -> [PushTarget] {
        context.targets.filter { $0.kind == kind }.sorted { $0.ref < $1.ref }
    }

    func history(_ target: PushTargetRef) -> [DeliveryRecord] {
        context.history.filter { $0.target == target }
    }

    mutating func run() {
        guard !context.targets.isEmpty else {
            plan.skips.append(DeliverySkip(
                target: nil, pushType: nil, reason: .noTargets,
                sentence: "The customer has registered no Live Activity, alert or widget token, so nothing is sent."))
            return
        }
        let activities = targets(.liveActivity)
        for target in activities { planActivity(target) }
        if activities.isEmpty {
            for target in targets(.pushToStart) { planStart(target) }
        } else {
            // The app registered the activity's own token: a start still waiting would open a second one.
            plan.superseded += pendingStarts(on: targets(.pushToStart)).map(\.id)
        }
        planAlerts()
        for target in targets(.widget) { planWidget(target) }
    }

    // MARK: - Live Activity update / end

    mutating func planActivity(_ target: PushTarget) {
        let past = history(target.ref).filter { $0.pushType == .liveactivity }
        if let end = past.first(where: { $0.liveActivityEvent == .end && $0.state.countsAgainstBudget }) {
            plan.skips.append(DeliverySkip(
                target: target.ref, pushType: .liveactivity, reason: .activityAlreadyEnded,
                sentence: "This Live Activity already received its end (delivery \(end.id)); nothing more is sent to it."))
            return
        }
        plan.superseded += past.filter { $0.state == .pending }.map(\.id)

        let ends = order.state.isTerminal
        let event: LiveActivityEvent = ends ? .end : .update
        let spent = past.filter {
            $0.priority == 10 && $0.state.countsAgainstBudget && $0.plannedAt > now.addingTimeInterval(-3600)
        }.count
        let budgetLeft = spent < policy.highPriorityPerActivityPerHour
        let hasAlertTargets = !targets(.alert).isEmpty
        // Frequent updates off: an urgent change that need not wake the customer goes like a routine one, alert inside.
        let quiet = urgent && !target.frequentUpdates && !DeliveryPlanner.wakesCustomer(context.event)

        let priority: Int
        let alertInBody: Bool
        let reason: DeliveryReason
        let sentence: String
        switch (urgent && !quiet, budgetLeft) {
        case (true, true):
            priority = 10
            alertInBody = true
            alertCarried = true
            reason = ends ? .activityEnd : .activityUpdateUrgent
            sentence = ends
                ? "The order was \(eventName): the Live Activity ends at priority 10 with an alert, and leaves the Lock Screen at its dismissal date."
                : "\(urgentWhy): a priority-10 Live Activity update with an alert (\(spent + 1) of \(policy.highPriorityPerActivityPerHour) this hour)."
        case (true, false):
            priority = 5
            // With an alert token the alert goes on its own (at once); without one, the update keeps it.
            alertInBody = !hasAlertTargets
            alertCarried = !hasAlertTargets
            separateAlertReason = hasAlertTargets ? .alertBudgetFallback : nil
            reason = ends ? .activityEnd : .activityUpdateBudgetSpent
            sentence = "\(urgentWhy), but this activity already had \(spent) priority-10 pushes in the last hour (budget \(policy.highPriorityPerActivityPerHour)): priority 5"
                + (hasAlertTargets ? ", and a separate alert." : ", keeping its alert.")
        case (false, _):
            priority = 5
            alertInBody = quiet
            if quiet { alertCarried = true }
            reason = ends ? .activityEnd : target.frequentUpdates ? .activityUpdate : .activityUpdateFrequentUpdatesOff
            let frequentOff = "the customer turned frequent updates off, so only ready and canceled go at priority 10"
            sentence = ends
                ? "The order was \(eventName): the Live Activity ends quietly at priority 5 and leaves the Lock Screen at its dismissal date."
                : quiet ? "\(urgentWhy), but \(frequentOff): a Live Activity update at priority 5 with the alert inside."
                : target.frequentUpdates ? "Routine step (\(eventName)): a silent Live Activity update at priority 5."
                : "Routine step (\(eventName)): a silent Live Activity update at priority 5; \(frequentOff)."
        }
        // One activity's pushes share one clock: a push-started activity's updates come after its start.
        let timestamp = nextTimestamp(after: past + startsOfThisOrder)
        let body = APNsBodyBuilder.liveActivity(
            order: order, projection: plan.projection, storeName: context.storeName, timeZone: context.timeZone, now: now,
            locale: order.locale, event: event, alertFor: alertInBody ? context.event : nil,
            timestamp: Date(timeIntervalSince1970: TimeInterval(timestamp)))
        plan.deliveries.append(PlannedDelivery(
            target: target.ref, pushType: .liveactivity, topic: APNsPushType.liveactivity.topic(bundleID: target.bundleID),
            priority: priority, body: body, collapseID: nil,
            expiration: now.addingTimeInterval(ends ? policy.endLifetime : policy.updateLifetime), notBefore: now,
            liveActivityEvent: event, apnsTimestamp: timestamp, reason: reason, sentence: sentence))
    }

    var urgentWhy: String {
        switch context.event {
        case .delayed:
            let minutes = Int((order.eta.timeIntervalSince(context.previous?.eta ?? order.eta) / 60).rounded())
            return "The ETA moved \(minutes) min later"
        default:
            return "The order is \(eventName)"
        }
    }

    /// `aps.timestamp` must rise per activity, even for two changes within one second.
    func nextTimestamp(after past: [DeliveryRecord]) -> Int64 {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        return past.compactMap(\.apnsTimestamp).max().map { max(seconds, $0 + 1) } ?? seconds
    }

    // MARK: - Push-to-start

    /// This order's starts, on any push-to-start token of its customer.
    var startsOfThisOrder: [DeliveryRecord] {
        context.history.filter { $0.orderID == order.id && $0.liveActivityEvent == .start }
    }

    func pendingStarts(on targets: [PushTarget]) -> [DeliveryRecord] {
        let refs = Set(targets.map(\.ref))
        return startsOfThisOrder.filter { refs.contains($0.target) && $0.state == .pending }
    }

    mutating func planStart(_ target: PushTarget) {
        if order.state.isTerminal {
            // A start still waiting (or retrying) would show a finished order, after the fact: withdraw it.
            plan.superseded += pendingStarts(on: [target]).map(\.id)
            plan.skips.append(DeliverySkip(
                target: target.ref, pushType: .liveactivity, reason: .startNotUseful,
                sentence: "The order is \(order.state.rawValue): starting a Live Activity now would only show a finished order."))
            return
        }
        let starts = history(target.ref).filter { $0.orderID == order.id && $0.liveActivityEvent == .start }
        if let started = starts.first(where: { $0.state == .inflight || $0.state == .sent }) {
            if urgent { separateAlertReason = .alertActivityPending }
            plan.skips.append(DeliverySkip(
                target: target.ref, pushType: .liveactivity, reason: .activityStartPending,
                sentence: "A start for this order already went out (delivery \(started.id)); updates follow once the app registers the activity's token."))
            return
        }
        plan.superseded += starts.filter { $0.state == .pending }.map(\.id)
        if urgent { alertCarried = true }
        let timestamp = nextTimestamp(after: starts)
        let body = APNsBodyBuilder.liveActivity(
            order: order, projection: plan.projection, storeName: context.storeName, timeZone: context.timeZone, now: now,
            locale: order.locale, event: .start, alertFor: urgent ? context.event : nil,
            timestamp: Date(timeIntervalSince1970: TimeInterval(timestamp)))
        plan.deliveries.append(PlannedDelivery(
            target: target.ref, pushType: .liveactivity, topic: APNsPushType.liveactivity.topic(bundleID: target.bundleID),
            priority: 10, body: body, collapseID: StartCollapseID.order(order.id),
            expiration: now.addingTimeInterval(policy.startLifetime), notBefore: now,
            liveActivityEvent: .start, apnsTimestamp: timestamp, reason: .activityStart,
            sentence: "No Live Activity is running but the customer has a push-to-start token: start one at priority 10 showing the order \(order.state.rawValue)."))
    }

    // MARK: - Alerts

    mutating func planAlerts() {
        let alertTargets = targets(.alert)
        guard urgent else {
            for target in alertTargets {
                plan.skips.append(DeliverySkip(
                    target: target.ref, pushType: .alert, reason: .alertNotNeeded,
                    sentence: "\(routineWhy): no notification interrupts the customer."))
            }
            return
        }
        if alertCarried && separateAlertReason == nil {
            for target in alertTargets {
                plan.skips.append(DeliverySkip(
                    target: target.ref, pushType: .alert, reason: .alertShownInActivity,
                    sentence: "The Live Activity push carries this alert; a separate notification would repeat it."))
            }
            return
        }
        let reason = separateAlertReason ?? .alertNoActivity
        guard !alertTargets.isEmpty else {
            plan.skips.append(DeliverySkip(
                target: nil, pushType: .alert, reason: .noAlertTarget,
                sentence: "\(urgentWhy) and the customer should hear now, but no alert token is registered."))
            return
        }
        let priority = context.event == .delayed ? 5 : 10
        let body = APNsBodyBuilder.alert(
            for: context.event, order: order, storeName: context.storeName, timeZone: context.timeZone, now: now,
            locale: order.locale)
        let why: String
        switch reason {
        case .alertBudgetFallback: why = "the Live Activity's priority-10 budget is spent, so its update went at priority 5"
        case .alertActivityPending: why = "a Live Activity was started but its token is not registered yet"
        default: why = "no Live Activity is running"
        }
        for target in alertTargets {
            plan.deliveries.append(PlannedDelivery(
                target: target.ref, pushType: .alert, topic: APNsPushType.alert.topic(bundleID: target.bundleID),
                priority: priority, body: body, collapseID: order.id.uuidString.lowercased(),
                expiration: now.addingTimeInterval(policy.alertLifetime), notBefore: now,
                liveActivityEvent: nil, apnsTimestamp: nil, reason: reason,
                sentence: "\(urgentWhy) and \(why): an alert at priority \(priority)."))
        }
    }

    var routineWhy: String {
        switch context.event {
        case .delayed: "A small delay (under \(Int(policy.largeDelay / 60)) min)"
        default: "A routine step (\(eventName))"
        }
    }

    // MARK: - Widgets

    mutating func planWidget(_ target: PushTarget) {
        let shown = DeliveryPlanner.changesWidgets(context.event)
        let moved = RelevanceInterval.moved(from: context.previous, to: order)
        guard shown || moved else {
            plan.skips.append(DeliverySkip(
                target: target.ref, pushType: .widgets, reason: .widgetUnchanged,
                sentence: "\(eventName.capitalized) changes neither what the widget shows nor when the order is relevant."))
            return
        }
        let past = history(target.ref).filter { $0.pushType == .widgets }
        if let waiting = past.first(where: { $0.state == .pending }) {
            plan.skips.append(DeliverySkip(
                target: target.ref, pushType: .widgets, reason: .widgetCoalesced,
                sentence: "A widget push is already waiting (delivery \(waiting.id)); when it goes, the widget reloads and shows this change too."))
            return
        }
        let counted = past.filter { $0.state.countsAgainstBudget }
        let today = counted.filter { $0.plannedAt > now.addingTimeInterval(-24 * 3600) }.count
        guard today < policy.widgetDailyCap else {
            plan.skips.append(DeliverySkip(
                target: target.ref, pushType: .widgets, reason: .widgetDailyCap,
                sentence: "This widget token already had \(today) pushes in the last 24 hours (cap \(policy.widgetDailyCap)); its timeline will catch up."))
            return
        }
        let earliest = counted.map(\.runAt).max().map { $0.addingTimeInterval(policy.widgetMinimumInterval) } ?? now
        let notBefore = max(now, earliest)
        let deferred = notBefore > now
        plan.deliveries.append(PlannedDelivery(
            target: target.ref, pushType: .widgets, topic: APNsPushType.widgets.topic(bundleID: target.bundleID),
            priority: 5, body: APNsBodyBuilder.widget, collapseID: nil,
            expiration: notBefore.addingTimeInterval(policy.widgetLifetime), notBefore: notBefore,
            liveActivityEvent: nil, apnsTimestamp: nil, reason: deferred ? .widgetDeferred : moved ? .widgetRelevanceChanged : .widgetChanged,
            sentence: deferred
                ? "\(widgetWhy(moved: moved)), but this widget was pushed less than \(Int(policy.widgetMinimumInterval / 60)) min ago: one reload goes at the end of that interval, covering every change until then."
                : "\(widgetWhy(moved: moved)): a content-changed push at priority 5\(moved ? ", so the watch asks for the order's relevance again" : "")."))
    }

    /// What changed for the widget: the order's relevance interval (by how much its end moved), or what it shows.
    func widgetWhy(moved: Bool) -> String {
        guard moved, let previous = context.previous, let before = RelevanceInterval.of(previous), let after = RelevanceInterval.of(order) else {
            return "The order is \(order.state.rawValue), which the widget shows"
        }
        let minutes = Int((after.end.timeIntervalSince(before.end) / 60).rounded())
        return "The order is \(order.state.rawValue) and its pickup window now ends \(abs(minutes)) min \(minutes < 0 ? "earlier" : "later")"
    }
}
