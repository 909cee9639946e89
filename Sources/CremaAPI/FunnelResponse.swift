public import Foundation

/// `GET /v1/stores/{store}/funnel?since=`: per push type and Live Activity event, how many pushes were planned, sent,
/// accepted by APNs and received (by surface), and the seconds from acceptance to receipt (docs/design.md §9.3).
public struct FunnelResponse: Codable, Sendable, Hashable {
    public var since: Date
    public var pushTypes: [Step]

    public struct Step: Codable, Sendable, Hashable {
        public var pushType: String
        /// `start`, `update` or `end` for Live Activity pushes; null for the others.
        public var event: String?
        public var planned: Int
        public var sent: Int
        public var accepted: Int
        /// By surface, every surface present (0 when none).
        public var received: [String: Int]
        public var receiptSeconds: Percentiles

        public init(
            pushType: String, event: String?, planned: Int, sent: Int, accepted: Int, received: [String: Int], receiptSeconds: Percentiles
        ) {
            self.pushType = pushType
            self.event = event
            self.planned = planned
            self.sent = sent
            self.accepted = accepted
            self.received = received
            self.receiptSeconds = receiptSeconds
        }

        enum CodingKeys: String, CodingKey {
            case event, planned, sent, accepted, received
            case pushType = "push_type"
            case receiptSeconds = "receipt_seconds"
        }

        /// `event` written as null when absent, as the contract shows it.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(pushType, forKey: .pushType)
            try c.encode(event, forKey: .event)
            try c.encode(planned, forKey: .planned)
            try c.encode(sent, forKey: .sent)
            try c.encode(accepted, forKey: .accepted)
            try c.encode(received, forKey: .received)
            try c.encode(receiptSeconds, forKey: .receiptSeconds)
        }
    }

    /// Null when no push of the step was received.
    public struct Percentiles: Codable, Sendable, Hashable {
        public var p50: Double?
        public var p99: Double?

        public init(p50: Double?, p99: Double?) {
            self.p50 = p50
            self.p99 = p99
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(p50, forKey: .p50)
            try c.encode(p99, forKey: .p99)
        }
    }

    public init(since: Date, pushTypes: [Step]) {
        self.since = since
        self.pushTypes = pushTypes
    }

    enum CodingKeys: String, CodingKey {
        case since
        case pushTypes = "push_types"
    }
}
