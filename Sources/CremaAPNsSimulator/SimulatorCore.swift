import CremaClock
import Foundation
import Logging
import Synchronization

/// The simulator's behaviour without any networking: validate, apply faults, record, answer. The channel
/// handlers only move bytes between the wire and this.
final class SimulatorCore: Sendable {
    /// What to do with a request.
    enum Reply: Sendable {
        /// `goAway`: after this answer, the connection sends GOAWAY and closes.
        case respond(status: Int, headers: [(String, String)], body: Data, wait: Wait? = nil, goAway: Bool = false)
        case drop
    }

    /// What an answer waits for before it is written.
    enum Wait: Sendable {
        case delay(Duration)
        /// The hold ticket's release (`releaseHeld()`); the handler parks the answer with `whenReleased`.
        case release(ticket: Int)
    }

    private struct ActiveFault {
        var fault: APNsSimulatorFault
        var remaining: Int
    }

    /// A caller waiting for the `count`-th request to a token (see `received(token:count:)`).
    private struct Arrival {
        var token: String
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var records: [APNsSimulatorRecord] = []
        var faults: [ActiveFault] = []
        var connections = 0
        /// Requests received per token since start (not trimmed with `records`), and who waits on them.
        var received: [String: Int] = [:]
        var arrivals: [Int: Arrival] = [:]
        var nextArrival = 0
        /// Hold tickets are numbered as requests are held; every ticket up to `released` may be answered. A ticket is
        /// issued before its request is recorded, so a release right after `received(token:)` cannot miss it.
        var heldIssued = 0
        var released = 0
        var parked: [(ticket: Int, answer: @Sendable () -> Void)] = []
    }

    let validator: APNsRequestValidator
    let verifier: ProviderTokenVerifier
    /// The broadcast channels each app created.
    let channels: SimulatorChannels
    let maxRecords: Int
    /// Stamps each request's arrival (and so judges its provider token).
    let clock: CremaClock
    let logger: Logger
    private let state = Mutex(State())

    init(
        validator: APNsRequestValidator, verifier: ProviderTokenVerifier, channels: SimulatorChannels, maxRecords: Int,
        clock: CremaClock, logger: Logger
    ) {
        self.validator = validator
        self.verifier = verifier
        self.channels = channels
        self.maxRecords = max(1, maxRecords)
        self.clock = clock
        self.logger = logger
    }

    func nextConnectionID() -> Int {
        state.withLock { state in
            state.connections += 1
            return state.connections
        }
    }

    // MARK: - Records and faults

    func records(token: String?) -> [APNsSimulatorRecord] {
        state.withLock { state in
            guard let token else { return state.records }
            return state.records.filter { $0.deviceToken == token }
        }
    }

    /// The broadcasts that reached `channel` (refused ones too), oldest first.
    func records(channel: String) -> [APNsSimulatorRecord] {
        state.withLock { state in state.records.filter { $0.isBroadcast && $0.channelID == channel } }
    }

    func clearRecords() { state.withLock { $0.records.removeAll() } }

    func inject(_ fault: APNsSimulatorFault) {
        let remaining: Int
        switch fault {
        case .forgetChannel(let id):
            // Not kept: APNs lost the channel once, and that is that.
            _ = channels.forget(id)
            return
        case .unregistered, .featureNotEnabled: remaining = Int.max
        case .status(_, _, _, let count, _), .latency(_, let count, _), .hold(let count, _), .dropConnection(let count),
            .goAway(let count), .broadcastStatus(_, _, _, let count, _):
            remaining = count
        }
        guard remaining > 0 else { return }
        state.withLock { $0.faults.append(ActiveFault(fault: fault, remaining: remaining)) }
    }

    func faults() -> [APNsSimulatorFault] { state.withLock { $0.faults.map(\.fault) } }

    func clearFaults() { state.withLock { $0.faults.removeAll() } }

    /// Lets every answer held so far go, and returns how many that was (parked or about to be).
    func releaseHeld() -> Int {
        let (count, due) = state.withLock { state in
            let count = state.heldIssued - state.released
            state.released = state.heldIssued
            let due = state.parked.map(\.answer)
            state.parked.removeAll()
            return (count, due)
        }
        for answer in due { answer() }
        return count
    }

    /// How many held answers wait for a release.
    func heldCount() -> Int { state.withLock { $0.heldIssued - $0.released } }

    /// Runs `answer` when `ticket` is released: now, if it already was.
    func whenReleased(ticket: Int, _ answer: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if ticket <= state.released { return true }
            state.parked.append((ticket, answer))
            return false
        }
        if now { answer() }
    }

    /// Returns once `count` requests to `token` have been received (answered or not: a request held by a latency
    /// fault counts from its arrival), so a test waits on the event instead of polling.
    func received(token: String, count: Int) async {
        let id = state.withLock { state in
            state.nextArrival += 1
            return state.nextArrival
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state in
                    if state.received[token, default: 0] >= count || Task.isCancelled { return true }
                    state.arrivals[id] = Arrival(token: token, count: count, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.arrivals.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    private func record(_ record: APNsSimulatorRecord) {
        // The record is in `records` before anyone waiting on its arrival resumes.
        let arrived = state.withLock { state in
            state.records.append(record)
            // Trim in batches so a full log costs one move per tenth of its size, not one per request.
            if state.records.count > maxRecords + maxRecords / 10 {
                state.records.removeFirst(state.records.count - maxRecords)
            }
            state.received[record.arrivalKey, default: 0] += 1
            let seen = state.received[record.arrivalKey, default: 0]
            let due = state.arrivals.filter { $0.value.token == record.arrivalKey && $0.value.count <= seen }
            for id in due.keys { state.arrivals.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        for continuation in arrived { continuation.resume() }
    }


    /// Takes one use of the first matching fault.
    func consume(where matches: (APNsSimulatorFault) -> Bool) -> APNsSimulatorFault? {
        state.withLock { state in
            guard let index = state.faults.firstIndex(where: { $0.remaining > 0 && matches($0.fault) }) else {
                return nil
            }
            let fault = state.faults[index].fault
            if state.faults[index].remaining != Int.max {
                state.faults[index].remaining -= 1
                if state.faults[index].remaining == 0 { state.faults.remove(at: index) }
            }
            return fault
        }
    }

    // MARK: - APNs requests

    func handle(_ exchange: SimulatorExchange, connection: SimulatorConnection) -> Reply {
        if exchange.path == "/sim" || exchange.path.hasPrefix("/sim/") {
            return ControlAPI(core: self).handle(exchange)
        }
        var record = APNsSimulatorRecord(
            receivedAt: exchange.receivedAt,
            deviceToken: "",
            pushType: exchange.header("apns-push-type"),
            topic: exchange.header("apns-topic"),
            priority: exchange.header("apns-priority"),
            expiration: exchange.header("apns-expiration"),
            collapseID: exchange.header("apns-collapse-id"),
            apnsID: "",
            body: String(decoding: exchange.body, as: UTF8.self),
            status: 0,
            reason: nil,
            detail: nil,
            method: exchange.method,
            path: exchange.path,
            httpVersion: connection.httpVersion,
            connectionID: connection.id)
        let sentID = exchange.header("apns-id").flatMap { APNsRequestValidator.isCanonicalUUID($0) ? $0 : nil }
        record.apnsID = sentID ?? UUID().uuidString.lowercased()
        if exchange.path.hasPrefix("/3/device/") {
            record.deviceToken = String(exchange.path.dropFirst("/3/device/".count))
        }

        if consume(where: { if case .dropConnection = $0 { true } else { false } }) != nil {
            record.detail = "fault: drop_connection"
            self.record(record)
            return .drop
        }
        var wait: Wait?
        let token = record.deviceToken
        if case .latency(let milliseconds, _, _)? = consume(where: {
            if case .latency(_, _, let faulted) = $0 { faulted == nil || faulted == token } else { false }
        }) {
            wait = .delay(.milliseconds(milliseconds))
        } else if case .hold? = consume(where: {
            if case .hold(_, let faulted) = $0 { faulted == nil || faulted == token } else { false }
        }) {
            wait = .release(ticket: state.withLock { state in
                state.heldIssued += 1
                return state.heldIssued
            })
        }
        let goAway = consume(where: { if case .goAway = $0 { true } else { false } }) != nil
        if goAway { record.detail = "fault: goaway" }

        if exchange.path.hasPrefix("/1/") || exchange.path.hasPrefix("/4/") {
            let answer = answerChannelTraffic(exchange, connection: connection, record: &record)
            return finish(record, status: answer.status, headers: answer.headers, body: answer.body, wait: wait, goAway: goAway)
        }

        var status = 200
        var headers: [(String, String)] = [("apns-id", record.apnsID)]
        var body: [String: Any]?
        switch evaluate(exchange, connection: connection, record: &record) {
        case .failure(let refusal):
            status = refusal.status
            record.reason = refusal.reason
            record.detail = refusal.detail
            body = ["reason": refusal.reason]
        case .success:
            let token = record.deviceToken
            if case .unregistered(_, let since)? = consume(where: {
                if case .unregistered(let faulted, _) = $0 { faulted == token } else { false }
            }) {
                status = 410
                record.reason = "Unregistered"
                record.detail = "fault: unregistered"
                body = ["reason": "Unregistered", "timestamp": Int64((since.timeIntervalSince1970 * 1000).rounded())]
            } else if case .status(let faultStatus, let reason, let retryAfter, _, _)? = consume(where: {
                if case .status(_, _, _, _, let faulted) = $0 { faulted == nil || faulted == token } else { false }
            }) {
                status = faultStatus
                record.reason = reason
                record.detail = "fault: status"
                body = ["reason": reason]
                if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
            }
        }
        return finish(record, status: status, headers: headers, body: body, wait: wait, goAway: goAway)
    }

    /// Records the request with its answer and encodes the answer.
    private func finish(
        _ record: APNsSimulatorRecord, status: Int, headers: [(String, String)], body: [String: Any]?, wait: Wait?,
        goAway: Bool
    ) -> Reply {
        var record = record
        var headers = headers
        record.status = status
        self.record(record)
        logger.debug(
            "APNs simulator answered",
            metadata: [
                "apns.token": "\(record.deviceToken.prefix(8))…", "apns.channel_id": "\(record.channelID ?? "")",
                "apns.status": "\(status)", "apns.reason": "\(record.reason ?? "")",
                "apns.push_type": "\(record.pushType ?? "")",
            ])

        var data = Data()
        if let body {
            data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
            headers.append(("content-type", "application/json"))
        }
        return .respond(status: status, headers: headers, body: data, wait: wait, goAway: goAway)
    }

    /// Apple's checks in order: path, headers, provider token, APNs headers, body.
    private func evaluate(
        _ exchange: SimulatorExchange, connection: SimulatorConnection, record: inout APNsSimulatorRecord
    ) -> Result<Void, APNsRequestValidator.Refusal> {
        switch validator.deviceToken(method: exchange.method, path: exchange.path) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let token): record.deviceToken = token
        }
        if case .failure(let refusal) = validator.checkHeaders(exchange) { return .failure(refusal) }
        if let refusal = authorize(exchange, connection: connection, record: &record) { return .failure(refusal) }

        let pushType: String
        switch validator.checkAPNsHeaders(exchange) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let checked): pushType = checked
        }
        if case .failure(let refusal) = validator.checkBody(exchange.body, pushType: pushType) { return .failure(refusal) }
        return validator.checkStartCollapseID(exchange, pushType: pushType)
    }

    /// The provider token, checked the same way for every route: nil when it is good.
    func authorize(
        _ exchange: SimulatorExchange, connection: SimulatorConnection, record: inout APNsSimulatorRecord
    ) -> APNsRequestValidator.Refusal? {
        typealias Refusal = APNsRequestValidator.Refusal
        switch verifier.verify(authorization: exchange.header("authorization"), now: exchange.receivedAt) {
        case .failure(.missing):
            return Refusal(403, "MissingProviderToken", "no authorization header")
        case .failure(.invalid(let detail, let claims)):
            note(claims, in: &record)
            return Refusal(403, "InvalidProviderToken", detail)
        case .failure(.expired(let claims)):
            note(claims, in: &record)
            return Refusal(403, "ExpiredProviderToken", "iat is more than an hour old")
        case .success(let claims):
            note(claims, in: &record)
            guard connection.adopt(claims.fingerprint, now: exchange.receivedAt) else {
                return Refusal(429, "TooManyProviderTokenUpdates", "the connection changed tokens twice within 20 minutes")
            }
            return nil
        }
    }

    private func note(_ claims: ProviderTokenVerifier.Claims?, in record: inout APNsSimulatorRecord) {
        guard let claims else { return }
        record.keyID = claims.keyID
        record.teamID = claims.teamID
        record.tokenIssuedAt = claims.issuedAt
        record.tokenFingerprint = claims.fingerprint
    }
}
