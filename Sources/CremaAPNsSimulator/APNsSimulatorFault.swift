public import Foundation

/// A failure the simulator plays instead of its normal answer, to exercise a sender's handling of APNs' bad days.
/// Faults apply in the order listed: drop, then latency or hold, then (for requests that pass validation) status faults.
///
/// JSON (for `POST /sim/faults`), dates as milliseconds since 1970 like APNs' own `timestamp`:
/// `{"type":"unregistered","token":"ab…","since":1732250000000}`,
/// `{"type":"status","status":429,"reason":"TooManyRequests","retry_after":5,"count":3,"token":null}`,
/// `{"type":"latency","milliseconds":2000,"count":1,"token":null}`, `{"type":"hold","count":1,"token":null}`,
/// `{"type":"drop_connection","count":1}`,
/// `{"type":"goaway","count":1}`,
/// `{"type":"forget_channel","channel":"<base64 id>"}`,
/// `{"type":"broadcast_status","status":429,"reason":"TooManyRequests","retry_after":5,"count":1,"channel":null}`,
/// `{"type":"feature_not_enabled","bundle_id":"com.example.app"}`.
///
/// `status`, `unregistered` apply to device pushes only; `broadcast_status` to broadcasts only; `latency` and `hold`
/// without a token, `drop_connection` and `goaway` to every request.
public enum APNsSimulatorFault: Sendable, Hashable, Codable {
    /// 410 `Unregistered` with `timestamp` for every valid request to `token`, until the faults are cleared.
    case unregistered(token: String, since: Date)
    /// The next `count` valid requests (to `token`, or to any token when nil) get this status, reason and
    /// `Retry-After` (seconds) instead of 200.
    case status(Int, reason: String, retryAfter: Int?, count: Int, token: String?)
    /// The next `count` requests (to `token`, or to any token when nil) are answered only after this delay.
    case latency(milliseconds: Int, count: Int, token: String? = nil)
    /// The next `count` requests (to `token`, or to any token when nil) are answered only when they are released
    /// (`APNsSimulator.releaseHeld()`, `POST /sim/release`): a test decides when a push in flight comes back,
    /// instead of racing a delay.
    case hold(count: Int, token: String? = nil)
    /// The next `count` requests close their connection without any answer.
    case dropConnection(count: Int)
    /// The next `count` requests are answered, then their connection says GOAWAY (last stream: that request's) and
    /// closes: requests already sent on later streams of it are never processed, as when APNs restarts a server.
    case goAway(count: Int)
    /// The channel is forgotten at once, as when APNs loses one (applied when injected, not kept as a fault):
    /// broadcasts to it are 400 `ChannelNotRegistered`, and `all-channels` no longer lists it.
    case forgetChannel(String)
    /// The next `count` valid broadcasts (to `channel`, or to any channel when nil) get this status, reason and
    /// `Retry-After` (seconds) instead of 200: `429 TooManyRequests` is APNs throttling a channel.
    case broadcastStatus(Int, reason: String, retryAfter: Int?, count: Int, channel: String?)
    /// The app's broadcast capability is off: every broadcast and channel-management call for it is 400
    /// `FeatureNotEnabled`, until the faults are cleared.
    case featureNotEnabled(bundleID: String)

    private enum CodingKeys: String, CodingKey {
        case type, token, since, status, reason
        case retryAfter = "retry_after"
        case count, milliseconds, channel
        case bundleID = "bundle_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "unregistered":
            // Without `since`, the token was retired when the fault was posted: the decoder's `now`, the simulator's
            // clock.
            guard
                let milliseconds = try container.decodeIfPresent(Double.self, forKey: .since)
                    ?? (decoder.userInfo[Self.now] as? Date).map({ $0.timeIntervalSince1970 * 1000 })
            else {
                throw DecodingError.keyNotFound(
                    CodingKeys.since, .init(codingPath: container.codingPath, debugDescription: "no since, and no decoder clock"))
            }
            self = .unregistered(
                token: try container.decode(String.self, forKey: .token),
                since: Date(timeIntervalSince1970: milliseconds / 1000))
        case "status":
            self = .status(
                try container.decode(Int.self, forKey: .status),
                reason: try container.decode(String.self, forKey: .reason),
                retryAfter: try container.decodeIfPresent(Int.self, forKey: .retryAfter),
                count: try container.decodeIfPresent(Int.self, forKey: .count) ?? 1,
                token: try container.decodeIfPresent(String.self, forKey: .token))
        case "latency":
            self = .latency(
                milliseconds: try container.decode(Int.self, forKey: .milliseconds),
                count: try container.decodeIfPresent(Int.self, forKey: .count) ?? 1,
                token: try container.decodeIfPresent(String.self, forKey: .token))
        case "hold":
            self = .hold(
                count: try container.decodeIfPresent(Int.self, forKey: .count) ?? 1,
                token: try container.decodeIfPresent(String.self, forKey: .token))
        case "drop_connection":
            self = .dropConnection(count: try container.decodeIfPresent(Int.self, forKey: .count) ?? 1)
        case "goaway":
            self = .goAway(count: try container.decodeIfPresent(Int.self, forKey: .count) ?? 1)
        case "forget_channel":
            self = .forgetChannel(try container.decode(String.self, forKey: .channel))
        case "broadcast_status":
            self = .broadcastStatus(
                try container.decode(Int.self, forKey: .status),
                reason: try container.decode(String.self, forKey: .reason),
                retryAfter: try container.decodeIfPresent(Int.self, forKey: .retryAfter),
                count: try container.decodeIfPresent(Int.self, forKey: .count) ?? 1,
                channel: try container.decodeIfPresent(String.self, forKey: .channel))
        case "feature_not_enabled":
            self = .featureNotEnabled(bundleID: try container.decode(String.self, forKey: .bundleID))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription:
                    "type must be unregistered, status, latency, hold, drop_connection, goaway, forget_channel, "
                    + "broadcast_status or feature_not_enabled")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .unregistered(let token, let since):
            try container.encode("unregistered", forKey: .type)
            try container.encode(token, forKey: .token)
            try container.encode((since.timeIntervalSince1970 * 1000).rounded(), forKey: .since)
        case .status(let status, let reason, let retryAfter, let count, let token):
            try container.encode("status", forKey: .type)
            try container.encode(status, forKey: .status)
            try container.encode(reason, forKey: .reason)
            try container.encodeIfPresent(retryAfter, forKey: .retryAfter)
            try container.encode(count, forKey: .count)
            try container.encodeIfPresent(token, forKey: .token)
        case .latency(let milliseconds, let count, let token):
            try container.encode("latency", forKey: .type)
            try container.encode(milliseconds, forKey: .milliseconds)
            try container.encode(count, forKey: .count)
            try container.encodeIfPresent(token, forKey: .token)
        case .hold(let count, let token):
            try container.encode("hold", forKey: .type)
            try container.encode(count, forKey: .count)
            try container.encodeIfPresent(token, forKey: .token)
        case .dropConnection(let count):
            try container.encode("drop_connection", forKey: .type)
            try container.encode(count, forKey: .count)
        case .goAway(let count):
            try container.encode("goaway", forKey: .type)
            try container.encode(count, forKey: .count)
        case .forgetChannel(let channel):
            try container.encode("forget_channel", forKey: .type)
            try container.encode(channel, forKey: .channel)
        case .broadcastStatus(let status, let reason, let retryAfter, let count, let channel):
            try container.encode("broadcast_status", forKey: .type)
            try container.encode(status, forKey: .status)
            try container.encode(reason, forKey: .reason)
            try container.encodeIfPresent(retryAfter, forKey: .retryAfter)
            try container.encode(count, forKey: .count)
            try container.encodeIfPresent(channel, forKey: .channel)
        case .featureNotEnabled(let bundleID):
            try container.encode("feature_not_enabled", forKey: .type)
            try container.encode(bundleID, forKey: .bundleID)
        }
    }
}

extension APNsSimulatorFault {
    /// The decoder's `userInfo` key for the time an `unregistered` fault without `since` is dated at.
    static let now = CodingUserInfoKey(rawValue: "crema.simulator.now")!
}
