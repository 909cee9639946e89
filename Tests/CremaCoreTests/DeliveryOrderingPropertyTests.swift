import CremaAPNsProtocol
import CremaCore
import Foundation
import PropertyBased
import Testing

/// Random event sequences and random delivery timings (claims, APNs accepting or failing, dispatchers dying
/// before or after APNs accepted, the app registering its activity late, time passing), run through the real
/// planner and `DeliveryOrdering`: at least once, but never stale after final, for every order.
@Suite struct DeliveryOrderingPropertyTests {
    typealias M = OutboxModel

    static let step = zip(Gen.int(in: 0...99), Gen.int(in: 0...15)).map { kind, n -> M.Step in
        switch kind {
        case 0..<14: M.Step.event(choice: n)
        case 14..<38: .claim(limit: 1 + n % 4)
        case 38..<58: .answer(which: n, accepted: true)
        case 58..<80: .answer(which: n, accepted: false)
        case 80..<86: .crash(which: n, acceptedFirst: n % 2 == 0)
        case 86..<92: .register
        default: .tick(seconds: n % 3)
        }
    }

    static let tokens = Gen<[PushTargetRef]?>.element(of: [
        [M.pushToStart], [M.pushToStart, M.alert], [M.pushToStart, M.alert, M.widget], [M.activity],
        [M.activity, M.alert, M.widget], [M.activity, M.pushToStart, M.alert],
    ]).map { $0 ?? [] }

    static func run(_ refs: [PushTargetRef], _ steps: [M.Step]) -> M {
        var model = M(refs: refs)
        for step in steps { model.run(step) }
        model.drain()
        return model
    }

    /// The pushes APNs accepted for one sequence (one token, one order), in the order APNs accepted them.
    static func sequences(_ model: M) -> [PushTargetRef: [M.Accepted]] {
        Dictionary(grouping: model.accepted.filter { $0.row.pushType == .liveactivity }, by: \.row.target)
    }

    @Test("nothing reaches an activity out of order or after its end") func nothingReachesAnActivityOutOfOrderOrAfterItsEnd() async {
        await propertyCheck(count: 400, input: Self.tokens, Self.step.array(of: 0...80)) { refs, steps in
            let model = Self.run(refs, steps)
            for (target, pushes) in Self.sequences(model) {
                let ids = pushes.map(\.row.id)
                // Planning order; the same row twice only when a dispatcher died after APNs accepted it.
                #expect(ids == ids.sorted(), "\(target): accepted out of planning order: \(ids)")
                if let end = pushes.firstIndex(where: { $0.row.liveActivityEvent == .end }) {
                    let after = pushes[end...].filter { $0.row.id != pushes[end].row.id }
                    #expect(after.isEmpty, "\(target): \(after.map(\.row.id)) accepted after the end \(pushes[end].row.id)")
                }
            }
        }
    }

    @Test("aps timestamp never goes backwards for an activity") func apsTimestampNeverGoesBackwardsForAnActivity() async {
        await propertyCheck(count: 400, input: Self.tokens, Self.step.array(of: 0...80)) { refs, steps in
            Self.expectTimestampsNeverGoBackwards(Self.run(refs, steps))
        }
    }

    /// The start (push-to-start token) and the updates (the activity's own token) are one activity, so their
    /// timestamps rise together in the order APNs accepts them, with one exception, which is at least once
    /// (docs/delivery.md, "Ordering"): when APNs accepted a push but its dispatcher died before recording it, the
    /// row goes back to pending after its lease and Crema, not knowing it arrived, sends it again with its own
    /// timestamp. Within one token's sequence that copy still goes before any newer row (the sequence is busy,
    /// or the row is stale and withdrawn). A start's copy, though, goes to the push-to-start token while the
    /// activity the first copy started registers its own token and is updated there, so it can be accepted
    /// after a newer update: as the same row (`aStartResentAfterALostRecordMayLandAfterTheFirstUpdate`), or as
    /// the newer start that replaced it when an event came before it went again (a pending start is unsent as
    /// far as Crema knows: `aStartReplacedAfterALostRecordMayLandAfterTheFirstUpdate`). Neither is an older
    /// push after a newer one in the activity APNs is updating. So the timestamps checked are those of each
    /// row's first acceptance and of the order's first accepted start; and what is left out must come from a
    /// lost record: every acceptance of a row but its last, and every accepted start but the last, is one its
    /// dispatcher lost (a recorded start is never followed by another).
    static func expectTimestampsNeverGoBackwards(_ model: M) {
        let pushes = model.accepted.filter { $0.row.pushType == .liveactivity }
        var seen = Set<Int64>()
        var started = false
        var counted: [M.Accepted] = []
        for push in pushes {
            let again = !seen.insert(push.row.id).inserted
            let isStart = push.row.liveActivityEvent == .start
            if !again && !(isStart && started) { counted.append(push) }
            started = started || isStart
        }
        let stamps = counted.compactMap(\.row.apnsTimestamp)
        #expect(stamps == stamps.sorted(), "timestamps accepted (each row's first, the first start): \(stamps)")
        for (id, acceptances) in Dictionary(grouping: pushes, by: \.row.id) where acceptances.count > 1 {
            let lost = acceptances.dropLast().allSatisfy { $0.lostWithDispatcher }
            #expect(lost, "row \(id) accepted \(acceptances.count) times, not only after a lost record")
        }
        let starts = pushes.filter { $0.row.liveActivityEvent == .start }
        let lost = starts.dropLast().allSatisfy { $0.lostWithDispatcher }
        #expect(lost, "starts accepted \(starts.map(\.row.id)), not only after a lost record")
    }

    @Test("no start is sent once the order is finished") func noStartIsSentOnceTheOrderIsFinished() async {
        await propertyCheck(count: 400, input: Self.tokens, Self.step.array(of: 0...80)) { refs, steps in
            let model = Self.run(refs, steps)
            let starts = model.accepted.filter { $0.row.liveActivityEvent == .start }
            if let finished = model.finishedAt {
                // A start may still land only if its attempt was already under way when the order finished.
                #expect(starts.allSatisfy { $0.claimedAt < finished }, "starts claimed at \(starts.map(\.claimedAt)), finished at \(finished)")
            }
        }
    }

    @Test("the newest planned push of every sequence is delivered at least once") func theNewestPlannedPushOfEverySequenceIsDeliveredAtLeastOnce() async {
        await propertyCheck(count: 400, input: Self.tokens, Self.step.array(of: 0...80)) { refs, steps in
            Self.expectDeliveredAtLeastOnce(Self.run(refs, steps))
        }
    }

    static func expectDeliveredAtLeastOnce(_ model: M) {
            #expect(!model.rows.contains { ($0.state == .pending && $0.runAt <= model.now) || $0.state == .inflight })
            let live = model.rows.filter { $0.pushType == .liveactivity && $0.state != .skipped && $0.state != .superseded }
            for (target, rows) in Dictionary(grouping: live, by: \.target) {
                let newest = rows.max { $0.id < $1.id }!
                #expect(newest.state == .sent, "\(target): newest \(newest.id) is \(newest.state)")
            }
            // An activity registered while the order was open ends with the order, whatever happened meanwhile.
            if model.registeredWhileOpen, model.order.state.isTerminal {
                let last = model.accepted.last { $0.row.target == M.activity }
                #expect(last?.row.liveActivityEvent == .end, "last push to the activity: \(last.map { "\($0.row.id)" } ?? "none")")
            }
    }

    @Test("a cancel while the start is retrying withdraws it") func aCancelWhileTheStartIsRetryingWithdrawsIt() {
        // The start fails, goes back to pending; the order is canceled; nothing is ever accepted.
        let model = Self.run([M.pushToStart], [
            .claim(limit: 1), .answer(which: 0, accepted: false), .event(choice: 3 /* canceled from queued */),
            .claim(limit: 4), .answer(which: 0, accepted: true),
        ])
        #expect(model.order.state == .canceled)
        #expect(model.accepted.isEmpty)
        #expect(model.rows.first { $0.liveActivityEvent == .start }?.state == .superseded)
    }

    @Test("a start in flight when the order is canceled is withdrawn when it fails") func aStartInFlightWhenTheOrderIsCanceledIsWithdrawnWhenItFails() {
        var model = M(refs: [M.pushToStart])
        model.run(.claim(limit: 1))
        model.run(.event(choice: 3))
        #expect(model.order.state == .canceled)
        model.run(.answer(which: 0, accepted: false))
        model.drain()
        #expect(model.accepted.isEmpty)
    }

    @Test("a start resent after a lost record may land after the first update") func aStartResentAfterALostRecordMayLandAfterTheFirstUpdate() throws {
        // Found by apsTimestampNeverGoesBackwardsForAnActivity (seed FETb/aGza62+PZeaimgQ6BzCXFIIHMwsna7RK0QZ+RY=),
        // shrunk; at least once, as documented, so the property leaves the second copy out (see expectTimestampsNeverGoBackwards).
        let model = Self.run([M.pushToStart, M.alert, M.widget], [
            .claim(limit: 2),  // the start and the widget reload
            .crash(which: 0, acceptedFirst: true),  // APNs accepted the start; its dispatcher died before recording it
            .claim(limit: 1),  // rescued after its lease, the start goes again: no activity token is registered yet
            .register,  // the activity the first copy started registers its token
            .event(choice: 0),  // started: an update to the activity's own token, its timestamp after the start's
            .claim(limit: 1),  // another sequence (another token): nothing holds the update back
            .answer(which: 0, accepted: true),  // the widget reload
            .answer(which: 1, accepted: true),  // the update, before the start's second attempt is answered
        ])
        let pushes = model.accepted.filter { $0.row.pushType == .liveactivity }
        try #require(pushes.count == 3)
        #expect(pushes.map(\.row.liveActivityEvent) == [.start, .update, .start])
        let start = pushes[0].row, update = pushes[1].row
        #expect(pushes[0].lostWithDispatcher && !pushes[2].lostWithDispatcher)
        // The late one is that same start again, with its own timestamp, not an older row after a newer one.
        #expect(pushes[2].row.id == start.id && pushes[2].row.apnsTimestamp == start.apnsTimestamp)
        #expect(update.id > start.id && update.apnsTimestamp! > start.apnsTimestamp!)
        Self.expectTimestampsNeverGoBackwards(model)
    }

    @Test("a start replaced after a lost record may land after the first update") func aStartReplacedAfterALostRecordMayLandAfterTheFirstUpdate() throws {
        // Found by apsTimestampNeverGoesBackwardsForAnActivity (seed Y1C6PDs1Rxuk0JhD2j8dv1UPH2v3w/7i9WLX0MDYDgA=),
        // shrunk: the same lost record, but an event comes before the start goes again.
        let model = Self.run([M.pushToStart], [
            .claim(limit: 1),
            .crash(which: 0, acceptedFirst: true),  // APNs accepted the start; its dispatcher died before recording it
            .event(choice: 0),  // started: the start is pending (unsent, as far as Crema knows), so a newer one replaces it
            .claim(limit: 1),  // the newer start goes: no activity token is registered yet
            .register,  // the activity the first start opened registers its token
            .event(choice: 0),  // another change: an update to the activity's own token, after both starts' timestamps
            .claim(limit: 1),  // another sequence (another token): nothing holds the update back
            .answer(which: 1, accepted: true),  // the update, before the newer start is answered
        ])
        let pushes = model.accepted.filter { $0.row.pushType == .liveactivity }
        try #require(pushes.count == 3)
        #expect(pushes.map(\.row.liveActivityEvent) == [.start, .update, .start])
        let (first, update, second) = (pushes[0], pushes[1].row, pushes[2].row)
        #expect(first.lostWithDispatcher && first.row.id < second.id && second.id < update.id)
        #expect(first.row.apnsTimestamp! < second.apnsTimestamp! && second.apnsTimestamp! < update.apnsTimestamp!)
        #expect(model.rows.first { $0.id == first.row.id }?.state == .superseded)
        Self.expectTimestampsNeverGoBackwards(model)
    }

    @Test("an update in flight when the end is planned goes first or never") func anUpdateInFlightWhenTheEndIsPlannedGoesFirstOrNever() {
        for accepted in [true, false] {
            var model = M(refs: [M.activity])
            model.drain()
            model.run(.event(choice: 0))  // started: an update
            model.run(.claim(limit: 1))
            model.run(.event(choice: 2))  // canceled: an end, while the update is in flight
            model.run(.claim(limit: 4))  // the end waits for the update
            #expect(model.attempts.count == 1)
            model.run(.answer(which: 0, accepted: accepted))
            model.drain()
            let events = model.accepted.map { $0.row.liveActivityEvent }
            let expected: [LiveActivityEvent?] = accepted ? [.update, .update, .end] : [.update, .end]
            #expect(events == expected)
        }
    }
}

/// Every pair of rows in one sequence, in every state: the older never goes once a newer one is planned, and
/// the newer waits while the older is pending or in flight.
@Suite struct DeliveryOrderingTableTests {
    let now = Fixtures.now
    let open = DeliveryOrdering.OrderFacts(finished: false, activityRegistered: false)

    func row(_ id: Int64, _ event: LiveActivityEvent, _ state: DeliveryState, target: PushTargetRef = OutboxModel.activity) -> DeliveryRecord {
        DeliveryRecord(
            id: id, target: target, orderID: Fixtures.order(in: .queued).id, pushType: .liveactivity, liveActivityEvent: event,
            priority: 5, state: state, plannedAt: now)
    }

    @Test("every pair of rows in one sequence") func everyPairOfRowsInOneSequence() {
        let live: Set<DeliveryState> = [.pending, .inflight, .sent, .dead]
        for olderEvent in [LiveActivityEvent.update, .end] {
            for newerEvent in [LiveActivityEvent.update, .end] {
                for olderState in DeliveryState.allCases {
                    for newerState in DeliveryState.allCases {
                        let older = row(1, olderEvent, olderState)
                        let newer = row(2, newerEvent, newerState)
                        let rows = [older, newer]
                        let olderDecision = DeliveryOrdering.decide(older, among: rows, order: open)
                        if live.contains(newerState) {
                            #expect(olderDecision == .supersede(newerEvent == .end ? .supersededByEnd : .supersededByNewer))
                        } else {
                            #expect(olderDecision == DeliveryOrdering.Decision.send)
                        }
                        let newerDecision = DeliveryOrdering.decide(newer, among: rows, order: open)
                        let expected: DeliveryOrdering.Decision = olderState == .pending || olderState == .inflight ? .wait : .send
                        #expect(newerDecision == expected)
                    }
                }
            }
        }
    }

    @Test("other sequences never hold a row back") func otherSequencesNeverHoldARowBack() {
        let mine = row(1, .update, .pending)
        let others = [
            row(2, .end, .inflight, target: OutboxModel.pushToStart),
            DeliveryRecord(id: 3, target: OutboxModel.activity, orderID: UUID(), pushType: .liveactivity, liveActivityEvent: .end,
                           priority: 5, state: .pending, plannedAt: now),
            DeliveryRecord(id: 4, target: OutboxModel.alert, orderID: Fixtures.order(in: .queued).id, pushType: .alert,
                           priority: 10, state: .pending, plannedAt: now),
        ]
        #expect(DeliveryOrdering.decide(mine, among: [mine] + others, order: open) == .send)
    }

    @Test("a start never goes for a finished order or a registered activity") func aStartNeverGoesForAFinishedOrderOrARegisteredActivity() {
        let start = row(1, .start, .pending, target: OutboxModel.pushToStart)
        for finished in [false, true] {
            for registered in [false, true] {
                let facts = DeliveryOrdering.OrderFacts(finished: finished, activityRegistered: registered)
                let expected: DeliveryOrdering.Decision =
                    finished ? .supersede(.startOrderFinished) : registered ? .supersede(.startActivityRegistered) : .send
                #expect(DeliveryOrdering.decide(start, among: [start], order: facts) == expected)
            }
        }
    }

    @Test("alerts and widgets are never held back") func alertsAndWidgetsAreNeverHeldBack() {
        let alert = DeliveryRecord(
            id: 1, target: OutboxModel.alert, orderID: UUID(), pushType: .alert, priority: 10, state: .pending, plannedAt: now)
        let finished = DeliveryOrdering.OrderFacts(finished: true, activityRegistered: true)
        #expect(DeliveryOrdering.decide(alert, among: [alert], order: finished) == .send)
    }
}
