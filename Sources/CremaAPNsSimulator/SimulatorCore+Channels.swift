import CremaAPNsProtocol
import Foundation

/// Broadcasts and channel management: Apple's checks in Apple's order (docs/apns.md §5.6),
/// then the channel's faults, then the answer.
extension SimulatorCore {
    /// An answer before it is encoded.
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: [String: Any]?
    }

    /// Answers `/1/apps/…` (channel management) and `/4/broadcasts/apps/…` (broadcasts).
    func answerChannelTraffic(
        _ exchange: SimulatorExchange, connection: SimulatorConnection, record: inout APNsSimulatorRecord
    ) -> Answer {
        let sentID = exchange.header("apns-request-id").flatMap { APNsRequestValidator.isCanonicalUUID($0) ? $0 : nil }
        record.apnsID = sentID ?? UUID().uuidString.lowercased()
        record.channelID = exchange.header("apns-channel-id")
        let outcome: Result<Answer, APNsRequestValidator.Refusal>
        if exchange.path.hasPrefix("/4/") {
            outcome = broadcast(exchange, connection: connection, record: &record)
        } else {
            outcome = manageChannel(exchange, connection: connection, record: &record)
        }
        var answer: Answer
        switch outcome {
        case .success(let accepted):
            answer = accepted
        case .failure(let refusal):
            record.reason = refusal.reason
            record.detail = refusal.detail
            answer = Answer(status: refusal.status, headers: [], body: ["reason": refusal.reason])
        }
        answer.headers.insert(("apns-request-id", record.apnsID), at: 0)
        return answer
    }

    /// `POST /4/broadcasts/apps/<bundleID>`.
    private func broadcast(
        _ exchange: SimulatorExchange, connection: SimulatorConnection, record: inout APNsSimulatorRecord
    ) -> Result<Answer, APNsRequestValidator.Refusal> {
        typealias Refusal = APNsRequestValidator.Refusal
        let bundleID: String
        switch validator.broadcastBundleID(method: exchange.method, path: exchange.path) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let named): bundleID = named
        }
        if case .failure(let refusal) = validator.checkHeaders(exchange) { return .failure(refusal) }
        if let refusal = authorize(exchange, connection: connection, record: &record) { return .failure(refusal) }
        if let refusal = featureNotEnabled(bundleID) { return .failure(refusal) }
        let channelID: String
        switch APNsRequestValidator.channelID(exchange) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let id): channelID = id
        }
        guard let channel = channels.find(channelID, bundleID: bundleID) else {
            return .failure(Refusal(400, "ChannelNotRegistered", "\(bundleID) has no channel \(channelID)"))
        }
        if let refusal = APNsRequestValidator.checkBroadcastHeaders(exchange, bundleID: bundleID, storage: channel.storage) {
            return .failure(refusal)
        }
        if let refusal = APNsRequestValidator.checkBroadcastBody(exchange.body) { return .failure(refusal) }
        if case .broadcastStatus(let status, let reason, let retryAfter, _, _)? = consume(where: {
            if case .broadcastStatus(_, _, _, _, let faulted) = $0 { faulted == nil || faulted == channelID } else { false }
        }) {
            // Answered as a success of the route so that the Retry-After header goes with it.
            record.reason = reason
            record.detail = "fault: broadcast_status"
            return .success(
                Answer(status: status, headers: retryAfter.map { [("retry-after", String($0))] } ?? [], body: ["reason": reason]))
        }
        return .success(Answer(status: 200, headers: [("apns-unique-id", UUID().uuidString.lowercased())], body: nil))
    }

    /// `/1/apps/<bundleID>/channels` and `/1/apps/<bundleID>/all-channels`.
    private func manageChannel(
        _ exchange: SimulatorExchange, connection: SimulatorConnection, record: inout APNsSimulatorRecord
    ) -> Result<Answer, APNsRequestValidator.Refusal> {
        typealias Refusal = APNsRequestValidator.Refusal
        let call: APNsRequestValidator.ChannelCall
        switch validator.channelCall(method: exchange.method, path: exchange.path) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let named): call = named
        }
        if case .failure(let refusal) = validator.checkHeaders(exchange) { return .failure(refusal) }
        if let refusal = authorize(exchange, connection: connection, record: &record) { return .failure(refusal) }
        if let refusal = featureNotEnabled(call.bundleID) { return .failure(refusal) }
        if let refusal = validator.checkApp(call.bundleID) { return .failure(refusal) }
        switch call.route {
        case .create:
            let storage: APNsChannelStorage
            switch APNsRequestValidator.channelStorage(exchange.body) {
            case .failure(let refusal): return .failure(refusal)
            case .success(let asked): storage = asked
            }
            switch channels.create(bundleID: call.bundleID, storage: storage, now: exchange.receivedAt) {
            case .failure(.limitReached(let limit)):
                return .failure(
                    Refusal(400, "CannotCreateChannelConfig", "\(call.bundleID) already has \(limit) channels, the limit"))
            case .success(let channel):
                record.channelID = channel.id
                return .success(Answer(status: 201, headers: [("apns-channel-id", channel.id)], body: nil))
            }
        case .read, .delete:
            let channelID: String
            switch APNsRequestValidator.channelID(exchange) {
            case .failure(let refusal): return .failure(refusal)
            case .success(let id): channelID = id
            }
            guard let channel = channels.find(channelID, bundleID: call.bundleID) else {
                return .failure(Refusal(400, "ChannelNotRegistered", "\(call.bundleID) has no channel \(channelID)"))
            }
            if call.route == .delete {
                _ = channels.delete(channelID, bundleID: call.bundleID)
                return .success(Answer(status: 204, headers: [], body: nil))
            }
            return .success(
                Answer(
                    status: 200, headers: [],
                    body: ["message-storage-policy": channel.storage.messageStoragePolicy, "push-type": "LiveActivity"]))
        case .list:
            return .success(Answer(status: 200, headers: [], body: ["channels": channels.list(bundleID: call.bundleID).map(\.id)]))
        }
    }

    /// 400 `FeatureNotEnabled` while a fault says the app's broadcast capability is off.
    private func featureNotEnabled(_ bundleID: String) -> APNsRequestValidator.Refusal? {
        let off = consume(where: { if case .featureNotEnabled(let faulted) = $0 { faulted == bundleID } else { false } })
        guard off != nil else { return nil }
        return APNsRequestValidator.Refusal(400, "FeatureNotEnabled", "fault: the broadcast capability of \(bundleID) is off")
    }
}
