import CremaActivityModels
import Foundation

/// The JSON shapes of APNs bodies, with Apple's hyphenated keys; mutable so the fitter can drop and cut.
enum APNsWire {
    struct LiveActivity: Encodable {
        var aps: APS

        struct APS: Encodable {
            var timestamp: Int
            var event: LiveActivityEvent
            var contentState: OrderActivityAttributes.ContentState
            var staleDate: Int?
            var dismissalDate: Int?
            var relevanceScore: Double?
            var alert: Alert?
            var attributesType: String?
            var attributes: OrderActivityAttributes?
            var inputPushToken: Int?

            enum CodingKeys: String, CodingKey {
                case timestamp, event, alert, attributes
                case contentState = "content-state"
                case staleDate = "stale-date"
                case dismissalDate = "dismissal-date"
                case relevanceScore = "relevance-score"
                case attributesType = "attributes-type"
                case inputPushToken = "input-push-token"
            }
        }
    }

    struct Notification: Encodable {
        var aps: APS

        struct APS: Encodable {
            var alert: Alert
            var sound: String?
            var interruptionLevel: InterruptionLevel?
            var threadID: String?

            enum CodingKeys: String, CodingKey {
                case alert, sound
                case interruptionLevel = "interruption-level"
                case threadID = "thread-id"
            }
        }
    }

    struct Alert: Encodable {
        var title: String
        var body: String?
        var sound: String?
    }

    /// Sorted keys make bodies byte-stable (golden files, dedup); dates keep the default strategy, which is
    /// what ActivityKit decodes `content-state` with (seconds since 2001).
    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            // Only non-finite doubles can fail, and the builder clamps every double it encodes.
            preconditionFailure("APNs body did not encode: \(error)")
        }
    }

    /// Whole Unix seconds; nil for a date no JSON number can carry (infinite, or beyond ±2^53 s).
    static func unixSeconds(_ date: Date) -> Int? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 9_007_199_254_740_992 else { return nil }
        return Int(seconds)
    }
}
