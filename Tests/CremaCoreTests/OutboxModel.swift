import CremaAPNsProtocol
import CremaCore
import Foundation

/// The outbox and its dispatchers as a pure model, run step by step: the real planner plans each event, and
/// claims and outcomes follow `DeliveryOrdering` exactly as the SQL in `DeliveryRepository` does (withdraw stale
/// pending rows, then claim what `decide` says may go; re-check a row that comes back from a failed attempt).
/// APNs is a list of accepted pushes, so ordering properties can be checked over any interleaving.
struct OutboxModel {
    /// One step of the world: the order changes, a dispatcher claims, APNs answers, a dispatcher dies, the app
    /// registers the activity it was pushed, or time passes.
    enum Step: Hashable, Sendable {
        case event(choice: Int)
        case claim(limit: Int)
        case answer(which: Int, accepted: Bool)
        /// The dispatcher holding an attempt dies; APNs may have accepted the push before it did. The row's
        /// lease runs out and it goes back to pending (the rescue).
        case crash(which: Int, acceptedFirst: Bool)
        case register
        case tick(seconds: Int)
    }

    /// A push APNs accepted.
    struct Accepted: Hashable {
        var row: DeliveryRecord
        /// The step at which the attempt that delivered it was claimed.
        var claimedAt: Int
        /// APNs accepted it but the dispatcher died before recording that: the row went back to pending after
        /// its lease and is sent again (at least once, docs/delivery.md "The dispatcher").
        var lostWithDispatcher = false
    }

    struct Attempt: Hashable {
        var rowID: Int64
        var claimedAt: Int
    }

    static let policy = DeliveryPolicy(highPriorityPerActivityPerHour: 2)
    static let pushToStart = PushTargetRef(kind: .pushToStart, id: 2)
    static let alert = PushTargetRef(kind: .alert, id: 3)
    static let widget = PushTargetRef(kind: .widget, id: 4)
    static let activity = PushTargetRef(kind: .liveActivity, id: 10)

    var order: Order
    var now: Date
    var targets: [PushTarget]
    var rows: [DeliveryRecord] = []
    var attempts: [Attempt] = []
    var accepted: [Accepted] = []
    var step = 0
    /// The step at which the order became picked up or canceled.
    var finishedAt: Int?
    /// Whether the app registered the activity's token while the order was still open.
    var registeredWhileOpen = false
    private var nextID: Int64 = 1

    /// A placed order (planned like any event) for a customer with `refs`.
    init(refs: [PushTargetRef], now: Date = Fixtures.now) {
        self.now = now
        self.order = try! OrderStateMachine.place(Fixtures.placement(), id: Fixtures.order(in: .queued).id, number: 42, at: now)
        self.targets = refs.map { PushTarget(ref: $0, environment: .production, registeredAt: now.addingTimeInterval(-60), bundleID: "cafe.crema.app") }
        if refs.contains(Self.activity) { registeredWhileOpen = true }
        plan(previous: nil, event: .placed)
    }

    var facts: DeliveryOrdering.OrderFacts {
        DeliveryOrdering.OrderFacts(finished: order.state.isTerminal, activityRegistered: targets.contains { $0.kind == .liveActivity })
    }

    mutating func run(_ step: Step) {
        self.step += 1
        switch step {
        case .event(let choice): applyEvent(choice)
        case .claim(let limit): claim(limit: limit)
        case .answer(let which, let ok):
            guard !attempts.isEmpty else { return }
            answer(attempts.remove(at: which % attempts.count), accepted: ok)
        case .crash(let which, let acceptedFirst):
            guard !attempts.isEmpty else { return }
            let attempt = attempts.remove(at: which % attempts.count)
            let index = rows.firstIndex { $0.id == attempt.rowID }!
            if acceptedFirst { accepted.append(Accepted(row: rows[index], claimedAt: attempt.claimedAt, lostWithDispatcher: true)) }
            rows[index].state = .pending  // rescued after its lease
        case .register:
            // The app registers the token of an activity it was pushed (a start APNs accepted).
            let started = accepted.contains { $0.row.liveActivityEvent == .start }
            guard started, !targets.contains(where: { $0.kind == .liveActivity }) else { return }
            targets.append(PushTarget(ref: Self.activity, environment: .production, registeredAt: now, bundleID: "cafe.crema.app"))
            if !order.state.isTerminal { registeredWhileOpen = true }
        case .tick(let seconds):
            now = now.addingTimeInterval(TimeInterval(seconds))
        }
    }

    /// With APNs healthy and no more events: claim and accept until nothing is pending or in flight.
    mutating func drain() {
        for _ in 0..<200 {
            while !attempts.isEmpty { run(.answer(which: 0, accepted: true)) }
            // A widget reload deferred to the end of its interval is not due yet: not waited for.
            guard rows.contains(where: { $0.state == .pending && $0.runAt <= now }) else { return }
            run(.claim(limit: 100))
        }
    }

    private mutating func applyEvent(_ choice: Int) {
        let allowed = order.allowedEvents.filter { $0 != .placed }
        guard !allowed.isEmpty else { return }
        let type = allowed[choice % allowed.count]
        let event: OrderEvent
        switch type {
        case .started: event = .started(barista: "Sam")
        case .delayed: event = .delayed(eta: order.eta.addingTimeInterval(TimeInterval(60 * (1 + choice % 15))), reason: "milk")
        case .ready: event = .ready(pickupPoint: "counter")
        case .pickedUp: event = .pickedUp
        case .canceled: event = .canceled(reason: "left")
        case .placed, .expired: return
        }
        let previous = order
        order = try! OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: now)
        if order.state.isTerminal && finishedAt == nil { finishedAt = self.step }
        plan(previous: previous, event: type)
    }

    /// As `DeliveryPlanning.write`: insert planned and skipped rows, supersede the listed rows still pending.
    private mutating func plan(previous: Order?, event: OrderEventType) {
        let context = DeliveryContext(
            order: order, previous: previous, event: event, storeName: "Market St",
            timeZone: TimeZone(identifier: "America/Los_Angeles")!, now: now, targets: targets, history: rows)
        let plan = DeliveryPlanner.plan(context, policy: Self.policy)
        for id in plan.superseded {
            if let index = rows.firstIndex(where: { $0.id == id && $0.state == .pending }) { rows[index].state = .superseded }
        }
        for delivery in plan.deliveries {
            rows.append(DeliveryRecord(
                id: nextID, target: delivery.target, orderID: order.id, pushType: delivery.pushType,
                liveActivityEvent: delivery.liveActivityEvent, priority: delivery.priority, state: .pending, plannedAt: now,
                runAt: delivery.notBefore, apnsTimestamp: delivery.apnsTimestamp))
            nextID += 1
        }
        for skip in plan.skips {
            if let target = skip.target {
                rows.append(DeliveryRecord(
                    id: nextID, target: target, orderID: order.id, pushType: skip.pushType ?? .alert, priority: nil,
                    state: .skipped, plannedAt: now))
                nextID += 1
            }
        }
    }

    /// As `DeliveryRepository.claim`: withdraw, then claim due rows `decide` lets go, oldest first.
    private mutating func claim(limit: Int) {
        for index in rows.indices where rows[index].state == .pending {
            if DeliveryOrdering.staleness(of: rows[index], among: rows, order: facts) != nil { rows[index].state = .superseded }
        }
        let candidates = rows.indices.filter { rows[$0].state == .pending && rows[$0].runAt <= now }
            .sorted { (rows[$0].runAt, rows[$0].id) < (rows[$1].runAt, rows[$1].id) }
        // One statement, one snapshot: decisions are taken on the rows as they were before this claim.
        let snapshot = rows
        var claimed = 0
        for index in candidates where claimed < limit {
            guard DeliveryOrdering.decide(snapshot[index], among: snapshot, order: facts) == .send else { continue }
            rows[index].state = .inflight
            attempts.append(Attempt(rowID: rows[index].id, claimedAt: step))
            claimed += 1
        }
    }

    /// As `DeliveryRepository.record`: sent, or back to pending unless it went stale meanwhile.
    private mutating func answer(_ attempt: Attempt, accepted ok: Bool) {
        let index = rows.firstIndex { $0.id == attempt.rowID }!
        guard rows[index].state == .inflight else { return }
        if ok {
            rows[index].state = .sent
            accepted.append(Accepted(row: rows[index], claimedAt: attempt.claimedAt))
        } else if DeliveryOrdering.afterFailure(rows[index], among: rows, order: facts) != nil {
            rows[index].state = .superseded
        } else {
            rows[index].state = .pending
            rows[index].runAt = now
        }
    }
}
