import CremaAPNsProtocol
import Foundation
import Testing

/// Every reason of Apple's broadcast and channel error table (docs/apns.md, "Channels and broadcasts") maps to
/// one class with a stable code.
@Suite("Broadcast and channel answers are classified")
struct APNsBroadcastDispositionTests {
    static let rows: [(Int, String?, APNsBroadcastDisposition)] = [
        (200, nil, .accepted),
        (201, nil, .accepted),
        (204, nil, .accepted),
        (400, "ChannelNotRegistered", .channelGone),
        (400, "BadChannelId", .channelGone),
        (410, "Unregistered", .channelGone),
        (400, "CannotCreateChannelConfig", .channelLimit),
        (429, "TooManyRequests", .retryLater(after: nil)),
        (429, "TooManyProviderTokenUpdates", .retryLater(after: 60)),
        (500, "InternalServerError", .retryLater(after: nil)),
        (503, "ServiceUnavailable", .retryLater(after: nil)),
        (503, "Shutdown", .retryLater(after: nil)),
        (400, "IdleTimeout", .retryLater(after: nil)),
        (403, "ExpiredProviderToken", .retryLater(after: nil)),
        (400, "FeatureNotEnabled", .configurationError),
        (400, "MissingChannelId", .configurationError),
        (400, "BadExpirationDate", .configurationError),
        (400, "InvalidPushType", .configurationError),
        (400, "MissingPushType", .configurationError),
        (400, "TopicDisallowed", .configurationError),
        (400, "BadPriority", .configurationError),
        (400, "BadRequestPayload", .configurationError),
        (400, "BadRequestParams", .configurationError),
        (400, "BadMessageId", .configurationError),
        (400, "PayloadEmpty", .configurationError),
        (413, "PayloadTooLarge", .configurationError),
        (403, "InvalidProviderToken", .configurationError),
        (403, "MissingProviderToken", .configurationError),
        (403, "BadCertificate", .configurationError),
        (403, "BadCertificateEnvironment", .configurationError),
        (403, "TopicMismatch", .configurationError),
        (404, "BadPath", .configurationError),
        (405, "MethodNotAllowed", .configurationError),
        (400, "SomethingApplePublishesLater", .configurationError),
    ]

    @Test("each broadcast status and reason maps to its class", arguments: rows)
    func classifies(status: Int, reason: String?, expected: APNsBroadcastDisposition) {
        #expect(APNsBroadcastDisposition(status: status, reason: reason, retryAfter: nil) == expected)
        #expect(APNsResponse(status: status, reason: reason).broadcastDisposition == expected)
    }

    @Test("Retry-After is carried into a later retry")
    func retryAfterIsCarried() {
        #expect(APNsResponse(status: 429, reason: "TooManyRequests", retryAfter: 30).broadcastDisposition == .retryLater(after: 30))
        #expect(APNsBroadcastDisposition(status: 503, reason: nil, retryAfter: 5) == .retryLater(after: 5))
    }

    @Test("each class has its own stable code")
    func codesAreStable() {
        let codes = [
            APNsBroadcastDisposition.accepted, .channelGone, .retryLater(after: 3), .configurationError, .channelLimit,
        ].map(\.code)
        #expect(codes == ["apns_accepted", "apns_channel_gone", "apns_retry_later", "apns_configuration_error", "apns_channel_limit"])
        #expect(APNsBroadcastDisposition.retryLater(after: nil).code == APNsBroadcastDisposition.retryLater(after: 9).code)
    }

    @Test("a storage maps to Apple's message-storage-policy number and back")
    func storagePolicyNumbers() {
        #expect(APNsChannelStorage.none.messageStoragePolicy == 0)
        #expect(APNsChannelStorage.latest.messageStoragePolicy == 1)
        #expect(APNsChannelStorage(messageStoragePolicy: 0) == APNsChannelStorage.none)
        #expect(APNsChannelStorage(messageStoragePolicy: 1) == .latest)
        #expect(APNsChannelStorage(messageStoragePolicy: 2) == nil)
        #expect(APNsChannelStorage.allCases.map(\.rawValue) == ["none", "latest"])
    }

    @Test("a broadcast body may be larger than a device push's")
    func broadcastLimit() {
        #expect(APNsBody.broadcastBodyLimit == 5120)
        #expect(APNsBody.maxBytes == 4096)
    }
}
