import CremaAPNsProtocol
import CremaCore
import Foundation

/// One event's inputs, fixed in advance, so every run of it does the same work: what `OrderService.place` or
/// `OrderService.apply` holds once the transaction has read the order, the store and the planning inputs.
public struct EventStep: Sendable {
    public enum Command: Sendable {
        case place(OrderPlacement, id: UUID, number: Int)
        case apply(OrderEvent, to: Order)
    }

    /// "es-MX delayed", for messages.
    public var name: String
    public var command: Command
    /// The event's commit time (the service's clock).
    public var at: Date
    public var storeName: String
    /// The store's time zone as stored (an identifier): the service looks it up per event, and so does this.
    public var timezone: String
    public var targets: [PushTarget]
    public var history: [DeliveryRecord]
}

/// What one event produced, reduced to numbers that show the work was done: the same step must give the same
/// result every time, or the benchmark measured something else.
public struct EventResult: Hashable, Sendable, CustomStringConvertible {
    public var version: Int
    public var state: OrderState
    /// Bytes of the stored projection (the `ContentState` JSON written with the order).
    public var projectionBytes: Int
    public var deliveries: Int
    public var skips: Int
    /// Bytes of every planned push body, added up.
    public var bodyBytes: Int
    /// The Live Activity events planned (start, update, end), in plan order.
    public var activityEvents: [LiveActivityEvent]

    public var description: String {
        "v\(version) \(state.rawValue) projection \(projectionBytes) B, \(deliveries) deliveries "
            + "(\(activityEvents.map(\.rawValue).joined(separator: ","))) \(bodyBytes) B, \(skips) skips"
    }
}

/// The core's work for one event, in the order the service does it, without I/O: the transition (with the
/// placement's validation), the stored projection, and the delivery plan (which projects, localizes and fits every
/// push body under 4 KB). Left out, because they are not the core's: the command's answer and the webhook bodies
/// (CremaAPI's encoding) and the SQL text (CremaStore).
public enum CoreEvent {
    static let policy = DeliveryPolicy()

    public struct Output {
        public var order: Order
        /// The stored projection's JSON, as `StoredProjection.json` hands it to the store.
        public var projection: String
        public var plan: DeliveryPlan
    }

    /// Runs one step. A step the core refuses is a broken fixture, not a result: it stops the program.
    public static func run(_ step: EventStep) -> Output {
        let next: Order
        let previous: Order?
        let event: OrderEventType
        do throws(OrderError) {
            switch step.command {
            case .place(let placement, let id, let number):
                // OrderService.place validates before it opens the transaction; `place` validates again.
                try OrderValidation.validate(placement, now: step.at)
                next = try OrderStateMachine.place(placement, id: id, number: number, at: step.at)
                previous = nil
                event = .placed
            case .apply(let orderEvent, let order):
                next = try OrderStateMachine.apply(orderEvent, to: order, expectedVersion: order.version, at: step.at)
                previous = order
                event = orderEvent.type
            }
        } catch {
            fatalError("\(step.name): the core refused the fixture's event: \(error.message)")
        }
        // OrderService.plan(order:previous:event:inputs:at:): the plan projects the order once and carries it.
        let context = DeliveryContext(
            order: next, previous: previous, event: event, storeName: step.storeName,
            timeZone: TimeZone(identifier: step.timezone) ?? .gmt, now: step.at, targets: step.targets, history: step.history)
        let plan = DeliveryPlanner.plan(context, policy: policy)
        // OrderTransaction: StoredProjection.json(plan.projection), the plan's projection, not a second one.
        // Written as StoredProjection.json writes it: ContentState.encode(to:), `/` escaped, the text the store binds.
        var writer = JSONWriter(escapingSlashes: true)
        do throws(JSONWriterError) {
            try plan.projection.encode(to: &writer)
        } catch {
            fatalError("\(step.name): the projection did not encode: \(error.code)")
        }
        let projection = writer.text
        return Output(order: next, projection: projection, plan: plan)
    }

    /// `run` and the numbers of what it produced.
    public static func result(_ step: EventStep) -> EventResult {
        summary(run(step))
    }

    public static func summary(_ output: Output) -> EventResult {
        EventResult(
            version: output.order.version, state: output.order.state, projectionBytes: output.projection.utf8.count,
            deliveries: output.plan.deliveries.count, skips: output.plan.skips.count,
            bodyBytes: output.plan.deliveries.reduce(0) { $0 + $1.body.json.count },
            activityEvents: output.plan.deliveries.compactMap(\.liveActivityEvent))
    }
}
