public import Foundation

/// The JSON shapes of APNs bodies with Apple's hyphenated keys, generic over the app's own `content-state`
/// and attributes so the protocol knows nothing of what an app shows; mutable so a fitter can drop and cut.
public enum APNsPayload {
    /// A Live Activity push (`apns-push-type: liveactivity`).
    public struct LiveActivity<ContentState: Encodable, Attributes: Encodable>: Encodable {
        public var aps: APS

        public init(aps: APS) { self.aps = aps }

        public struct APS: Encodable {
            public var timestamp: Int
            public var event: LiveActivityEvent
            public var contentState: ContentState
            public var staleDate: Int?
            public var dismissalDate: Int?
            public var relevanceScore: Double?
            public var alert: Alert?
            public var attributesType: String?
            public var attributes: Attributes?
            public var inputPushToken: Int?
            /// A start onto a broadcast channel (iOS 18): the started activity subscribes to this channel.
            public var inputPushChannel: String?

            public init(
                timestamp: Int, event: LiveActivityEvent, contentState: ContentState, staleDate: Int? = nil,
                dismissalDate: Int? = nil, relevanceScore: Double? = nil
            ) {
                self.timestamp = timestamp
                self.event = event
                self.contentState = contentState
                self.staleDate = staleDate
                self.dismissalDate = dismissalDate
                self.relevanceScore = relevanceScore
            }

            enum CodingKeys: String, CodingKey {
                case timestamp, event, alert, attributes
                case contentState = "content-state"
                case staleDate = "stale-date"
                case dismissalDate = "dismissal-date"
                case relevanceScore = "relevance-score"
                case attributesType = "attributes-type"
                case inputPushToken = "input-push-token"
                case inputPushChannel = "input-push-channel"
            }
        }
    }

    /// An alert notification (`apns-push-type: alert`).
    public struct Notification: Encodable {
        public var aps: APS

        public init(aps: APS) { self.aps = aps }

        public struct APS: Encodable {
            public var alert: Alert
            public var sound: String?
            public var interruptionLevel: InterruptionLevel?
            public var threadID: String?
            /// 1 lets the app's Notification Service Extension see (and answer) the notification before it shows.
            public var mutableContent: Int?

            public init(
                alert: Alert, sound: String?, interruptionLevel: InterruptionLevel?, threadID: String?, mutableContent: Int? = nil
            ) {
                self.alert = alert
                self.sound = sound
                self.interruptionLevel = interruptionLevel
                self.threadID = threadID
                self.mutableContent = mutableContent
            }

            enum CodingKeys: String, CodingKey {
                case alert, sound
                case interruptionLevel = "interruption-level"
                case threadID = "thread-id"
                case mutableContent = "mutable-content"
            }
        }
    }

    /// `aps.alert` as a dictionary: a title, an optional body and (inside Live Activity pushes) a sound.
    public struct Alert: Encodable, Sendable {
        public var title: String
        public var body: String?
        public var sound: String?

        public init(title: String, body: String?, sound: String? = nil) {
            self.title = title
            self.body = body
            self.sound = sound
        }
    }

    /// Sorted keys make bodies byte-stable (golden files, dedup); dates keep the default strategy, which is
    /// what ActivityKit decodes `content-state` with (seconds since 2001).
    public static func encode(_ value: some Encodable) -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            // Only non-finite doubles can fail, and the builders clamp every double they encode.
            preconditionFailure("APNs body did not encode: \(error)")
        }
    }

    /// A body written directly by its own `encode(to:)` (`/` not escaped, as `encode` writes it), for the bodies
    /// written per event: the same bytes as `encode` at a fraction of the cost. 2 KiB covers a Live Activity body
    /// without growing (they are 0.7–1.2 KB); a draft being fitted can grow it to 4 KB and more.
    public static func write(_ body: (inout JSONWriter) throws(JSONWriterError) -> Void) -> Data {
        var writer = JSONWriter(escapingSlashes: false, capacity: 2048)
        do {
            try body(&writer)
        } catch {
            // As in `encode`: only non-finite doubles can fail, and the builders clamp every double they write.
            preconditionFailure("APNs body did not encode: \(error.code)")
        }
        return Data(writer.bytes)
    }

    /// One configured encoder for every body (an encoder is safe to share; making one per body showed in profiles).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Whole Unix seconds (`aps.timestamp`, `stale-date`, `dismissal-date`); nil for a date no JSON number can
    /// carry (infinite, or beyond ±2^53 s).
    public static func unixSeconds(_ date: Date) -> Int? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 9_007_199_254_740_992 else { return nil }
        return Int(seconds)
    }
}
