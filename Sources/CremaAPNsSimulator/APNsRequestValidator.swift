import CremaAPNsProtocol
import Foundation

/// APNs' request rules (docs/apns.md §1–§6) as one function from a request to Apple's status and reason.
/// Where Apple has no specific reason (a malformed payload), the answer is 400 `BadRequestPayload` (Apple's
/// broadcast string) and the record's `detail` says what was wrong.
struct APNsRequestValidator: Sendable {
    /// A refusal: status, Apple's reason, and the simulator's explanation.
    struct Refusal: Error, Equatable {
        var status: Int
        var reason: String
        var detail: String

        init(_ status: Int, _ reason: String, _ detail: String) {
            self.status = status
            self.reason = reason
            self.detail = detail
        }
    }

    /// Every `apns-push-type` APNs knows, with the topic suffix it requires (table §1.3).
    static let topicSuffixes: [String: String] = [
        "alert": "", "background": "", "liveactivity": ".push-type.liveactivity", "widgets": ".push-type.widgets",
        "controls": ".push-type.controls", "location": ".location-query", "voip": ".voip",
        "complication": ".complication", "fileprovider": ".pushkit.fileprovider", "mdm": "", "pushtotalk": ".voip-ptt",
    ]
    private static let headersChecked: Set<String> = [
        "authorization", "apns-push-type", "apns-topic", "apns-priority", "apns-expiration", "apns-collapse-id",
        "apns-id", "apns-channel-id", "apns-request-id",
    ]

    /// The apps topics may name; empty accepts any well-formed topic.
    var bundleIDs: Set<String> = []
    /// `APNsSimulatorConfiguration.startsNeedCollapseID`.
    var startsNeedCollapseID = false

    /// A push-to-start without `apns-collapse-id`, when the simulator holds starts to having one.
    func checkStartCollapseID(_ exchange: SimulatorExchange, pushType: String) -> Result<Void, Refusal> {
        guard startsNeedCollapseID, pushType == "liveactivity", exchange.header("apns-collapse-id") == nil,
            let payload = try? JSONDecoder().decode(JSONValue.self, from: exchange.body), payload["aps"]?["event"]?.stringValue == "start"
        else { return .success(()) }
        return .failure(Refusal(400, "BadCollapseId", "a push-to-start needs apns-collapse-id, or a retried start makes a second activity"))
    }

    /// The device token of `/3/device/<token>`, or the path refusal.
    func deviceToken(method: String, path: String) -> Result<String, Refusal> {
        guard method == "POST" else {
            return .failure(Refusal(405, "MethodNotAllowed", "method \(method) is not POST"))
        }
        let prefix = "/3/device/"
        if path == "/3/device" || path == prefix {
            return .failure(Refusal(400, "MissingDeviceToken", "no device token in :path"))
        }
        guard path.hasPrefix(prefix) else { return .failure(Refusal(404, "BadPath", "path must be /3/device/<token>")) }
        let token = String(path.dropFirst(prefix.count))
        guard token.count.isMultiple(of: 2), (16...512).contains(token.count), token.allSatisfy(\.isHexDigit) else {
            return .failure(
                Refusal(400, "BadDeviceToken", "the device token must be 16 to 512 hex digits, even in number"))
        }
        return .success(token)
    }

    /// Header rules other than authorization, in a fixed order.
    func checkHeaders(_ exchange: SimulatorExchange) -> Result<String, Refusal> {
        var seen: Set<String> = []
        for header in exchange.headers {
            let name = header.name.lowercased()
            if Self.headersChecked.contains(name), !seen.insert(name).inserted {
                return .failure(Refusal(400, "DuplicateHeaders", "\(name) was sent more than once"))
            }
        }
        return .success("")
    }

    /// Push type, topic, priority, id, collapse id, expiration; returns the push type.
    func checkAPNsHeaders(_ exchange: SimulatorExchange) -> Result<String, Refusal> {
        // APNs only recommends the header outside watchOS; Crema always sends it, so the simulator insists
        // (reason borrowed from Apple's broadcast table).
        guard let pushType = exchange.header("apns-push-type") else {
            return .failure(Refusal(400, "MissingPushType", "apns-push-type is required by this simulator"))
        }
        guard let suffix = Self.topicSuffixes[pushType] else {
            return .failure(Refusal(400, "InvalidPushType", "unknown apns-push-type \(pushType)"))
        }
        guard let topic = exchange.header("apns-topic"), !topic.isEmpty else {
            return .failure(Refusal(400, "MissingTopic", "apns-topic is required"))
        }
        guard topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }),
            !topic.hasPrefix("."), !topic.hasSuffix("."), !topic.contains("..")
        else { return .failure(Refusal(400, "BadTopic", "apns-topic \(topic) is not a bundle ID")) }
        if !bundleIDs.isEmpty, !(topic.hasSuffix(suffix) && bundleIDs.contains(String(topic.dropLast(suffix.count)))) {
            let allowed = bundleIDs.sorted().map { $0 + suffix }
            let detail =
                allowed.count == 1
                ? "a \(pushType) push for \(bundleIDs.sorted()[0]) must use topic \(allowed[0])"
                : "a \(pushType) push must use one of the topics \(allowed.joined(separator: ", "))"
            return .failure(Refusal(400, "DeviceTokenNotForTopic", detail))
        }
        if bundleIDs.isEmpty {
            let suffixes = Set(Self.topicSuffixes.values.filter { !$0.isEmpty })
            let carried = suffixes.first { topic.hasSuffix($0) } ?? ""
            if carried != suffix {
                return .failure(
                    Refusal(400, "DeviceTokenNotForTopic", "a \(pushType) push needs a topic ending in \"\(suffix)\""))
            }
        }
        if let priority = exchange.header("apns-priority") {
            guard ["1", "5", "10"].contains(priority) else {
                return .failure(Refusal(400, "BadPriority", "apns-priority must be 1, 5 or 10"))
            }
            if pushType == "background", priority == "10" {
                return .failure(Refusal(400, "BadPriority", "background pushes must use priority 5"))
            }
        }
        if let id = exchange.header("apns-id"), !Self.isCanonicalUUID(id) {
            return .failure(Refusal(400, "BadMessageId", "apns-id must be a canonical 8-4-4-4-12 UUID"))
        }
        if let collapseID = exchange.header("apns-collapse-id"), collapseID.utf8.count > 64 {
            return .failure(Refusal(400, "BadCollapseId", "apns-collapse-id is longer than 64 bytes"))
        }
        if let expiration = exchange.header("apns-expiration"),
            expiration.isEmpty || !expiration.allSatisfy(\.isASCII) || UInt64(expiration) == nil
        {
            return .failure(Refusal(400, "BadExpirationDate", "apns-expiration must be Unix seconds"))
        }
        return .success(pushType)
    }

    /// Size, JSON shape and the push type's `aps` rules (§4, §5.3, §6).
    func checkBody(_ body: Data, pushType: String) -> Result<Void, Refusal> {
        guard !body.isEmpty else { return .failure(Refusal(400, "PayloadEmpty", "the body is empty")) }
        let limit = pushType == "voip" ? 5120 : 4096
        guard body.count <= limit else {
            return .failure(Refusal(413, "PayloadTooLarge", "the body is \(body.count) bytes; the limit is \(limit)"))
        }
        guard let payload = try? JSONDecoder().decode(JSONValue.self, from: body), payload.isObject else {
            return .failure(Refusal(400, "BadRequestPayload", "the body is not a JSON object"))
        }
        guard let aps = payload["aps"], aps.isObject else {
            return .failure(Refusal(400, "BadRequestPayload", "the body has no aps object"))
        }
        switch pushType {
        case "liveactivity": return Self.checkLiveActivity(aps)
        case "widgets":
            guard aps["content-changed"] == .bool(true) else {
                return .failure(Refusal(400, "BadRequestPayload", "a widgets push needs aps.content-changed: true"))
            }
        case "alert":
            switch aps["alert"] {
            case .string?, .object?: break
            default:
                return .failure(
                    Refusal(400, "BadRequestPayload", "an alert push needs aps.alert (a string or an object)"))
            }
        default: break
        }
        return .success(())
    }

    static func checkLiveActivity(_ aps: JSONValue) -> Result<Void, Refusal> {
        func refuse(_ detail: String) -> Result<Void, Refusal> { .failure(Refusal(400, "BadRequestPayload", detail)) }
        guard let event = aps["event"]?.stringValue, ["start", "update", "end"].contains(event) else {
            return refuse("aps.event must be start, update or end")
        }
        guard aps["timestamp"]?.isNumber == true else { return refuse("aps.timestamp must be a number (Unix seconds)") }
        guard aps["content-state"]?.isObject == true else { return refuse("aps.content-state must be an object") }
        for key in ["stale-date", "dismissal-date", "relevance-score"]
        where aps[key] != nil && aps[key]?.isNumber != true {
            return refuse("aps.\(key) must be a number")
        }
        if event == "start" {
            guard aps["attributes-type"]?.stringValue?.isEmpty == false else {
                return refuse("a start needs aps.attributes-type")
            }
            guard aps["attributes"]?.isObject == true else { return refuse("a start needs aps.attributes (an object)") }
            guard aps["alert"]?.isObject == true else { return refuse("a start needs aps.alert (an object)") }
            if let channel = aps["input-push-channel"] {
                guard channel.stringValue?.isEmpty == false else { return refuse("aps.input-push-channel must be a channel id (a string)") }
                guard aps["input-push-token"] == nil else { return refuse("a start subscribes to a channel or asks for a token, not both") }
            }
        } else if aps["attributes"] != nil || aps["attributes-type"] != nil {
            return refuse("only a start may carry aps.attributes and aps.attributes-type")
        }
        return .success(())
    }

    static func isCanonicalUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
