public import CremaAPNsProtocol
public import CremaActivityModels
public import Foundation

/// Builds the three kinds of APNs body Crema sends for an order, each guaranteed to fit `APNsBody.maxBytes`.
///
/// When a body would not fit, optional fields go first, one at a time in a fixed order (`liveActivityDropOrder`),
/// then every text is cut to a shrinking number of bytes until it fits. The status, the event, the timestamp
/// and (for `start`) the attributes and alert are never dropped; at the last step every text is "…", which
/// always fits. docs/activity-contract.md documents the order for the app's developers.
public enum APNsBodyBuilder {
    /// Optional Live Activity fields, least needed first.
    public static let liveActivityDropOrder: [String] = [
        "aps.content-state.lockScreen.detail",
        "aps.content-state.lockScreen.etaRelative",
        "aps.content-state.baristaName",
        "aps.content-state.pickupPoint",
        "aps.content-state.lockScreen.etaAbsolute",
        "aps.content-state.minimal.text",
        "aps.alert.sound",
        "aps.alert",  // update and end only: a start keeps its alert
        "aps.relevance-score",
        "aps.stale-date",
        "aps.dismissal-date",
        "aps.content-state.compactTrailing.countdownEnd",
    ]

    /// Optional alert notification fields, least needed first.
    public static let alertDropOrder: [String] = ["aps.sound"]

    /// The WidgetKit push body: it tells WidgetKit to reload the timelines, and carries the push's receipt (which no
    /// extension sees: a widget push is received as the widget's next `GET /v1/me/widget`, an inferred receipt).
    public static let widget = APNsBody(
        json: Data((#"{"aps":{"content-changed":true},"crema":{"receipt":""# + DeliveryReceipt.placeholder + #""}}"#).utf8))

    /// The wire shape of Crema's Live Activity pushes: the app's `ContentState` and attributes.
    typealias LiveActivityPayload = APNsPayload.LiveActivity<OrderActivityAttributes.ContentState, OrderActivityAttributes>

    public static func liveActivity(_ push: LiveActivityPush) -> APNsBody {
        liveActivity(push) { body in
            APNsPayload.write { (writer: inout JSONWriter) throws(JSONWriterError) in try body.encode(to: &writer) }
        }
    }

    /// `encode` writes each draft the fitter tries: the body's own writer, or in tests `APNsPayload.encode`, which must
    /// give the same bodies, fitting included (`APNsBodyJSONWriterTests`).
    static func liveActivity(_ push: LiveActivityPush, encode: (OrderLiveActivityBody) -> Data) -> APNsBody {
        var aps = LiveActivityPayload.APS(
            timestamp: APNsPayload.unixSeconds(push.timestamp) ?? 0,
            event: push.kind.event,
            contentState: sanitized(push.contentState),
            staleDate: push.staleDate.flatMap(APNsPayload.unixSeconds),
            dismissalDate: push.dismissalDate.flatMap(APNsPayload.unixSeconds),
            relevanceScore: push.relevanceScore.flatMap { $0.isFinite ? $0 : nil })
        switch push.kind {
        case .start(let attributes, let alert):
            aps.attributesType = "OrderActivityAttributes"
            aps.attributes = attributes
            aps.inputPushToken = 1
            aps.alert = .init(title: alert.title, body: alert.body, sound: push.sound)
        case .update(let alert), .end(let alert):
            aps.alert = alert.map { .init(title: $0.title, body: $0.body, sound: push.sound) }
        }
        let isStart = push.kind.event == .start
        return APNsBodyFitter.fit(
            aps,
            drops: [
                { $0.contentState.lockScreen.detail.take() },
                { $0.contentState.lockScreen.etaRelative.take() },
                { $0.contentState.baristaName.take() },
                { $0.contentState.pickupPoint.take() },
                { $0.contentState.lockScreen.etaAbsolute.take() },
                { $0.contentState.minimal.text.take() },
                { $0.alert?.sound.take() ?? false },
                { isStart ? false : $0.alert.take() },
                { $0.relevanceScore.take() },
                { $0.staleDate.take() },
                { $0.dismissalDate.take() },
                { $0.contentState.compactTrailing.countdownEnd.take() },
            ],
            names: liveActivityDropOrder,
            cap: capTexts,
            encode: { encode(OrderLiveActivityBody(aps: $0, crema: push.identity)) })
    }

    /// A plain alert notification (push type `alert`), threaded per order so a customer's messages about one
    /// order stack together.
    /// `crema`, when given, goes beside `aps` with `mutable-content` set, so the app's Notification Service Extension
    /// can post the receipt it carries.
    public static func alert(
        _ alert: AlertText,
        threadID: String,
        interruptionLevel: InterruptionLevel,
        sound: String? = "default",
        crema: OrderActivityIdentity? = nil
    ) -> APNsBody {
        Self.alert(alert, threadID: threadID, interruptionLevel: interruptionLevel, sound: sound, crema: crema) { body in
            APNsPayload.write { body.encode(to: &$0) }
        }
    }

    /// `encode` as in `liveActivity(_:encode:)`.
    static func alert(
        _ alert: AlertText,
        threadID: String,
        interruptionLevel: InterruptionLevel,
        sound: String?,
        crema: OrderActivityIdentity? = nil,
        encode: (OrderAlertBody) -> Data
    ) -> APNsBody {
        let aps = APNsPayload.Notification.APS(
            alert: .init(title: alert.title, body: alert.body),
            sound: sound,
            interruptionLevel: interruptionLevel,
            threadID: threadID,
            mutableContent: crema?.receipt == nil ? nil : 1)
        return APNsBodyFitter.fit(
            aps,
            drops: [{ $0.sound.take() }],
            names: alertDropOrder,
            cap: { aps, cap in
                aps.alert.title = TextByteCap.cap(aps.alert.title, to: cap)
                aps.alert.body = aps.alert.body.map { TextByteCap.cap($0, to: cap) }
                // Crema's thread ids are order UUIDs (36 bytes) and never reach this; a caller's huge one is cut
                // rather than failing the send.
                aps.threadID = aps.threadID.map { TextByteCap.cap($0, to: max(cap, 64)) }
            },
            encode: { encode(OrderAlertBody(aps: $0, crema: crema)) })
    }

    /// The Live Activity body for `order` as it is now: projection, default timing, and the localized alert
    /// for `alertFor` (nil: a silent update). A `start` always carries an alert (ActivityKit requires one).
    /// `projection` is the order's content state at `now` when the caller already has it (the planner projects once
    /// per change); nil projects it here. `timestamp` defaults to `now`; the planner passes a larger one to keep it
    /// rising per activity.
    public static func liveActivity(
        order: Order,
        projection: OrderActivityAttributes.ContentState? = nil,
        storeName: String,
        timeZone: TimeZone,
        now: Date,
        locale: String,
        event: LiveActivityEvent,
        alertFor alertEvent: OrderEventType?,
        timestamp: Date? = nil
    ) -> APNsBody {
        liveActivity(
            push(
                order: order, projection: projection, storeName: storeName, timeZone: timeZone, now: now, locale: locale,
                event: event, alertFor: alertEvent, timestamp: timestamp))
    }

    /// What `liveActivity(order:…)` sends, before encoding.
    static func push(
        order: Order,
        projection: OrderActivityAttributes.ContentState?,
        storeName: String,
        timeZone: TimeZone,
        now: Date,
        locale: String,
        event: LiveActivityEvent,
        alertFor alertEvent: OrderEventType?,
        timestamp: Date?
    ) -> LiveActivityPush {
        var state = projection ?? OrderProjector.contentState(order: order, storeName: storeName, timeZone: timeZone, now: now, locale: locale)
        // The dispatcher puts the delivery's receipt in place of this when it sends (`DeliveryReceipt`).
        state.receipt = DeliveryReceipt.placeholder
        let alert = alertEvent.map {
            OrderProjector.alert(for: $0, order: order, storeName: storeName, timeZone: timeZone, now: now, locale: locale)
        }
        let kind: LiveActivityPush.Kind
        switch event {
        case .start:
            let attributes = OrderProjector.attributes(order: order, storeName: storeName, locale: locale)
            let startAlert = alert ?? OrderProjector.alert(for: .placed, order: order, storeName: storeName, timeZone: timeZone, now: now, locale: locale)
            kind = .start(attributes: attributes, alert: startAlert)
        case .update: kind = .update(alert: alert)
        case .end: kind = .end(alert: alert)
        }
        return LiveActivityPush(
            kind: kind,
            contentState: state,
            timestamp: timestamp ?? now,
            staleDate: LiveActivityTiming.staleDate(state, now: now),
            dismissalDate: event == .end ? LiveActivityTiming.dismissalDate(state.status, now: now) : nil,
            relevanceScore: LiveActivityTiming.relevanceScore(state, now: now),
            identity: OrderActivityIdentity(
                orderID: order.id.uuidString.lowercased(), storeID: order.storeID, number: order.number,
                receipt: DeliveryReceipt.placeholder))
    }

    /// The alert notification for `event` on `order`.
    public static func alert(
        for event: OrderEventType,
        order: Order,
        storeName: String,
        timeZone: TimeZone,
        now: Date,
        locale: String
    ) -> APNsBody {
        let text = OrderProjector.alert(for: event, order: order, storeName: storeName, timeZone: timeZone, now: now, locale: locale)
        return alert(
            text, threadID: order.id.uuidString.lowercased(), interruptionLevel: .forEvent(event),
            crema: OrderActivityIdentity(
                orderID: order.id.uuidString.lowercased(), storeID: order.storeID, number: order.number,
                receipt: DeliveryReceipt.placeholder))
    }

    // MARK: - Fitting

    static func capTexts(_ aps: inout LiveActivityPayload.APS, _ limit: Int) {
        func c(_ text: inout String) { text = TextByteCap.cap(text, to: limit) }
        func c(_ text: inout String?) { text = text.map { TextByteCap.cap($0, to: limit) } }
        c(&aps.contentState.pickupPoint)
        c(&aps.contentState.baristaName)
        c(&aps.contentState.compactLeading.text)
        c(&aps.contentState.compactTrailing.text)
        c(&aps.contentState.minimal.text)
        c(&aps.contentState.small.title)
        c(&aps.contentState.small.status)
        c(&aps.contentState.lockScreen.title)
        c(&aps.contentState.lockScreen.subtitle)
        c(&aps.contentState.lockScreen.detail)
        c(&aps.contentState.lockScreen.etaRelative)
        c(&aps.contentState.lockScreen.etaAbsolute)
        c(&aps.contentState.symbolName)
        if var attributes = aps.attributes {
            c(&attributes.storeName)
            c(&attributes.customerName)
            c(&attributes.itemsSummary)
            aps.attributes = attributes
        }
        if var alert = aps.alert {
            c(&alert.title)
            c(&alert.body)
            aps.alert = alert
        }
    }

    /// Doubles JSON cannot carry (NaN, infinity) would make encoding fail: progress becomes 0 and is kept in
    /// 0...1, an impossible ETA becomes the reference date, an impossible countdown is left out.
    static func sanitized(_ state: OrderActivityAttributes.ContentState) -> OrderActivityAttributes.ContentState {
        var state = state
        if !state.progress.isFinite { state.progress = 0 }
        state.progress = min(max(state.progress, 0), 1)
        if !state.eta.timeIntervalSinceReferenceDate.isFinite { state.eta = Date(timeIntervalSinceReferenceDate: 0) }
        if let end = state.compactTrailing.countdownEnd, !end.timeIntervalSinceReferenceDate.isFinite {
            state.compactTrailing.countdownEnd = nil
        }
        return state
    }
}
