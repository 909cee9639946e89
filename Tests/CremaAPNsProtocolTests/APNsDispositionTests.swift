import CremaAPNsProtocol
import Foundation
import Testing

/// Every row of docs/apns.md §3 maps to one action.
@Suite struct APNsDispositionTests {
    static let rows: [(Int, String?, APNsDisposition)] = [
        (200, nil, .delivered),
        (400, "BadCollapseId", .deadLetter),
        (400, "BadDeviceToken", .retireToken(since: nil)),
        (400, "BadExpirationDate", .deadLetter),
        (400, "BadMessageId", .deadLetter),
        (400, "BadPriority", .deadLetter),
        (400, "BadTopic", .deadLetter),
        (400, "DeviceTokenNotForTopic", .retireToken(since: nil)),
        (400, "DuplicateHeaders", .deadLetter),
        (400, "IdleTimeout", .retry(after: nil)),
        (400, "InvalidPushType", .deadLetter),
        (400, "MissingDeviceToken", .deadLetter),
        (400, "MissingTopic", .deadLetter),
        (400, "PayloadEmpty", .deadLetter),
        (400, "TopicDisallowed", .deadLetter),
        (403, "BadCertificate", .deadLetter),
        (403, "BadCertificateEnvironment", .deadLetter),
        (403, "ExpiredProviderToken", .refreshProviderToken),
        (403, "Forbidden", .deadLetter),
        (403, "InvalidProviderToken", .signingKeyRejected),
        (403, "MissingProviderToken", .deadLetter),
        (403, "UnrelatedKeyIdInToken", .deadLetter),
        (403, "BadEnvironmentKeyIdInToken", .deadLetter),
        (404, "BadPath", .deadLetter),
        (405, "MethodNotAllowed", .deadLetter),
        (410, "Unregistered", .retireToken(since: nil)),
        (410, "ExpiredToken", .retireToken(since: nil)),
        (413, "PayloadTooLarge", .deadLetter),
        (429, "TooManyProviderTokenUpdates", .retry(after: 60)),
        (429, "TooManyRequests", .retry(after: nil)),
        (500, "InternalServerError", .retry(after: nil)),
        (503, "ServiceUnavailable", .retry(after: nil)),
        (503, "Shutdown", .retry(after: nil)),
    ]

    @Test("each APNs status and reason maps to the reference's action", arguments: rows)
    func classifies(status: Int, reason: String?, expected: APNsDisposition) {
        #expect(APNsResponse(status: status, reason: reason).disposition == expected)
    }

    @Test("a 410 keeps its timestamp so a token registered again afterwards survives")
    func unregisteredKeepsTimestamp() {
        let since = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(APNsResponse(status: 410, reason: "Unregistered", timestamp: since).disposition == .retireToken(since: since))
    }

    @Test("Retry-After is carried into the retry")
    func retryAfterIsCarried() {
        #expect(APNsResponse(status: 429, reason: "TooManyRequests", retryAfter: 30).disposition == .retry(after: 30))
        #expect(APNsResponse(status: 503, reason: "ServiceUnavailable", retryAfter: 5).disposition == .retry(after: 5))
    }
}
