import CremaAPNsProtocol
import Foundation

/// Apple's rules for broadcasts and channel management (docs/apns.md §5.6), each step a
/// function from the request to Apple's status and reason, called by the core in Apple's order.
extension APNsRequestValidator {
    /// A channel-management call: the app in the path and what it asks for.
    struct ChannelCall: Equatable {
        enum Route: Equatable {
            case create, read, delete, list
        }
        var bundleID: String
        var route: Route
    }

    /// `/1/apps/<bundleID>/channels` (POST, GET, DELETE) or `/1/apps/<bundleID>/all-channels` (GET).
    func channelCall(method: String, path: String) -> Result<ChannelCall, Refusal> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard parts.count == 4, parts.first == "1", parts.dropFirst().first == "apps", !parts[parts.startIndex + 2].isEmpty
        else { return .failure(Refusal(404, "BadPath", "path must be /1/apps/<bundle id>/channels or …/all-channels")) }
        let bundleID = String(parts[parts.startIndex + 2])
        switch (parts.last.map(String.init) ?? "", method) {
        case ("channels", "POST"): return .success(ChannelCall(bundleID: bundleID, route: .create))
        case ("channels", "GET"): return .success(ChannelCall(bundleID: bundleID, route: .read))
        case ("channels", "DELETE"): return .success(ChannelCall(bundleID: bundleID, route: .delete))
        case ("all-channels", "GET"): return .success(ChannelCall(bundleID: bundleID, route: .list))
        case ("channels", _), ("all-channels", _):
            return .failure(Refusal(405, "MethodNotAllowed", "method \(method) is not allowed on \(path)"))
        default:
            return .failure(Refusal(404, "BadPath", "path must be /1/apps/<bundle id>/channels or …/all-channels"))
        }
    }

    /// The app of `POST /4/broadcasts/apps/<bundleID>`.
    func broadcastBundleID(method: String, path: String) -> Result<String, Refusal> {
        let prefix = "/4/broadcasts/apps/"
        guard path.hasPrefix(prefix), path.count > prefix.count, !path.dropFirst(prefix.count).contains("/") else {
            return .failure(Refusal(404, "BadPath", "path must be /4/broadcasts/apps/<bundle id>"))
        }
        guard method == "POST" else { return .failure(Refusal(405, "MethodNotAllowed", "method \(method) is not POST")) }
        return .success(String(path.dropFirst(prefix.count)))
    }

    /// The app named in a broadcast or channel path: a bundle ID without a push-type suffix, and one of the
    /// simulator's apps when it was given any.
    func checkApp(_ bundleID: String) -> Refusal? {
        if let suffix = Self.pushTypeSuffix(of: bundleID) {
            return Refusal(400, "TopicDisallowed", "the bundle ID must not carry a push-type suffix (\(suffix))")
        }
        if !bundleIDs.isEmpty, !bundleIDs.contains(bundleID) {
            return Refusal(400, "TopicDisallowed", "\(bundleID) is not one of this simulator's apps (\(bundleIDs.sorted().joined(separator: ", ")))")
        }
        return nil
    }

    /// The `apns-channel-id` header: present (`MissingChannelId`) and base64 (`BadChannelId`).
    static func channelID(_ exchange: SimulatorExchange) -> Result<String, Refusal> {
        guard let id = exchange.header("apns-channel-id"), !id.isEmpty else {
            return .failure(Refusal(400, "MissingChannelId", "apns-channel-id is required"))
        }
        guard let bytes = Data(base64Encoded: id), !bytes.isEmpty else {
            return .failure(Refusal(400, "BadChannelId", "apns-channel-id is not base64"))
        }
        return .success(id)
    }

    /// A create body: `{"message-storage-policy":0|1,"push-type":"LiveActivity"}`.
    static func channelStorage(_ body: Data) -> Result<APNsChannelStorage, Refusal> {
        guard !body.isEmpty else { return .failure(Refusal(400, "PayloadEmpty", "the body is empty")) }
        guard let object = try? JSONDecoder().decode(JSONValue.self, from: body), object.isObject else {
            return .failure(Refusal(400, "BadRequestPayload", "the body is not a JSON object"))
        }
        guard let pushType = object["push-type"]?.stringValue else {
            return .failure(Refusal(400, "MissingPushType", "the body has no push-type"))
        }
        guard pushType.lowercased() == "liveactivity" else {
            return .failure(Refusal(400, "InvalidPushType", "the only allowed push-type is LiveActivity"))
        }
        guard case .number(let policy)? = object["message-storage-policy"], policy.rounded() == policy,
            let storage = APNsChannelStorage(messageStoragePolicy: Int(policy))
        else {
            return .failure(Refusal(400, "BadRequestParams", "message-storage-policy must be 0 or 1"))
        }
        return .success(storage)
    }

    /// A broadcast's headers once its channel is known: push type, topic, priority, expiration (against the
    /// channel's storage), request id.
    static func checkBroadcastHeaders(_ exchange: SimulatorExchange, bundleID: String, storage: APNsChannelStorage) -> Refusal? {
        guard let pushType = exchange.header("apns-push-type"), !pushType.isEmpty else {
            return Refusal(400, "MissingPushType", "apns-push-type is required")
        }
        guard pushType.lowercased() == "liveactivity" else {
            return Refusal(400, "InvalidPushType", "the only allowed apns-push-type is liveactivity")
        }
        if let topic = exchange.header("apns-topic") {
            if let suffix = pushTypeSuffix(of: topic) {
                return Refusal(400, "TopicDisallowed", "apns-topic must not carry a push-type suffix (\(suffix))")
            }
            if topic != bundleID { return Refusal(400, "TopicDisallowed", "apns-topic \(topic) is not the app of the path") }
        }
        guard let priority = exchange.header("apns-priority"), ["1", "5", "10"].contains(priority) else {
            return Refusal(400, "BadPriority", "apns-priority is required: 1, 5 or 10")
        }
        guard let text = exchange.header("apns-expiration"), !text.isEmpty, text.allSatisfy(\.isASCII),
            let expiration = UInt64(text)
        else { return Refusal(400, "BadExpirationDate", "apns-expiration is required: Unix seconds, or 0") }
        if storage == .none, expiration != 0 {
            return Refusal(400, "BadExpirationDate", "a channel that stores no message takes apns-expiration 0 only")
        }
        if let id = exchange.header("apns-request-id"), !isCanonicalUUID(id) {
            return Refusal(400, "BadMessageId", "apns-request-id must be a canonical 8-4-4-4-12 UUID")
        }
        return nil
    }

    /// A broadcast's body: not empty, at most 5120 bytes, and a Live Activity update or end (a broadcast cannot
    /// start an activity), checked like a device push's after that.
    static func checkBroadcastBody(_ body: Data) -> Refusal? {
        guard !body.isEmpty else { return Refusal(400, "PayloadEmpty", "the body is empty") }
        guard body.count <= APNsBody.broadcastBodyLimit else {
            return Refusal(413, "PayloadTooLarge", "the body is \(body.count) bytes; the limit is \(APNsBody.broadcastBodyLimit)")
        }
        guard let payload = try? JSONDecoder().decode(JSONValue.self, from: body), payload.isObject else {
            return Refusal(400, "BadRequestPayload", "the body is not a JSON object")
        }
        guard let aps = payload["aps"], aps.isObject else {
            return Refusal(400, "BadRequestPayload", "the body has no aps object")
        }
        if aps["event"]?.stringValue == "start" {
            return Refusal(400, "BadRequestPayload", "a broadcast cannot start a Live Activity (aps.event is update or end)")
        }
        if case .failure(let refusal) = checkLiveActivity(aps) { return refusal }
        return nil
    }

    /// The push-type suffix a bundle ID or topic ends with, if any.
    private static func pushTypeSuffix(of name: String) -> String? {
        if let range = name.range(of: ".push-type.") { return String(name[range.lowerBound...]) }
        return topicSuffixes.values.first { !$0.isEmpty && name.hasSuffix($0) }
    }
}
