import CremaAPNsProtocol
import AsyncHTTPClient
import CremaAPNsSimulator
import Foundation
import NIOHTTP1
import Testing

/// One malformed request and the answer Apple gives it (docs/apns.md §3).
struct RuleCase: Sendable, CustomTestStringConvertible {
    var name: String
    var method: HTTPMethod = .POST
    var path: String? = nil
    var pushType: String? = "liveactivity"
    var topic: String? = "com.example.crema.push-type.liveactivity"
    var authorization: Authorization = .valid
    var extraHeaders: [(String, String)] = []
    var body: String? = #"{"aps":{"timestamp":1732250000,"event":"update","content-state":{"status":"ready"}}}"#
    var status: Int
    var reason: String

    enum Authorization: Sendable { case valid, missing, garbage, expired }

    var testDescription: String { "\(name) → \(status) \(reason)" }
}

@Suite("The simulator answers each malformed request as APNs does")
struct ValidationRuleTests {
    static let cases: [RuleCase] = [
        RuleCase(name: "GET instead of POST", method: .GET, body: nil, status: 405, reason: "MethodNotAllowed"),
        RuleCase(name: "a path outside /3/device", path: "/3/devices/abcdef0123456789", status: 404, reason: "BadPath"),
        RuleCase(name: "no device token", path: "/3/device/", status: 400, reason: "MissingDeviceToken"),
        RuleCase(
            name: "a token that is not hex", path: "/3/device/not-a-hex-token-at-all", status: 400,
            reason: "BadDeviceToken"),
        RuleCase(
            name: "an absurdly long token", path: "/3/device/" + String(repeating: "ab", count: 300), status: 400,
            reason: "BadDeviceToken"),
        RuleCase(name: "no authorization", authorization: .missing, status: 403, reason: "MissingProviderToken"),
        RuleCase(name: "a malformed JWT", authorization: .garbage, status: 403, reason: "InvalidProviderToken"),
        RuleCase(
            name: "a JWT issued over an hour ago", authorization: .expired, status: 403, reason: "ExpiredProviderToken"),
        RuleCase(name: "no apns-topic", topic: nil, status: 400, reason: "MissingTopic"),
        RuleCase(name: "a topic that is not a bundle ID", topic: "com.example crema", status: 400, reason: "BadTopic"),
        RuleCase(
            name: "a Live Activity push on the plain bundle topic", topic: "com.example.crema", status: 400,
            reason: "DeviceTokenNotForTopic"),
        RuleCase(
            name: "another app's topic", topic: "com.other.app.push-type.liveactivity", status: 400,
            reason: "DeviceTokenNotForTopic"),
        RuleCase(name: "an unknown push type", pushType: "banana", status: 400, reason: "InvalidPushType"),
        RuleCase(name: "no push type", pushType: nil, status: 400, reason: "MissingPushType"),
        RuleCase(name: "priority 7", extraHeaders: [("apns-priority", "7")], status: 400, reason: "BadPriority"),
        RuleCase(
            name: "a 65-byte collapse id", extraHeaders: [("apns-collapse-id", String(repeating: "c", count: 65))],
            status: 400, reason: "BadCollapseId"),
        RuleCase(
            name: "a non-numeric expiration", extraHeaders: [("apns-expiration", "tomorrow")], status: 400,
            reason: "BadExpirationDate"),
        RuleCase(
            name: "an apns-id that is not a UUID", extraHeaders: [("apns-id", "order-42")], status: 400,
            reason: "BadMessageId"),
        RuleCase(
            name: "apns-topic twice", extraHeaders: [("apns-topic", "com.example.crema.push-type.liveactivity")],
            status: 400, reason: "DuplicateHeaders"),
        RuleCase(name: "an empty body", body: nil, status: 400, reason: "PayloadEmpty"),
        RuleCase(
            name: "a 4097-byte body", body: #"{"aps":{"x":""# + String(repeating: "x", count: 4097 - 15) + #""}}"#,
            status: 413, reason: "PayloadTooLarge"),
        RuleCase(name: "a body that is not JSON", body: "hello", status: 400, reason: "BadRequestPayload"),
        RuleCase(name: "a body without aps", body: #"{"order":42}"#, status: 400, reason: "BadRequestPayload"),
        RuleCase(
            name: "a Live Activity without event", body: #"{"aps":{"timestamp":1,"content-state":{}}}"#, status: 400,
            reason: "BadRequestPayload"),
        RuleCase(
            name: "a Live Activity with a text timestamp",
            body: #"{"aps":{"timestamp":"now","event":"update","content-state":{}}}"#, status: 400,
            reason: "BadRequestPayload"),
        RuleCase(
            name: "a Live Activity without content-state", body: #"{"aps":{"timestamp":1,"event":"update"}}"#,
            status: 400, reason: "BadRequestPayload"),
        RuleCase(
            name: "a start without attributes",
            body:
                #"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A","alert":{"title":"t"}}}"#,
            status: 400, reason: "BadRequestPayload"),
        RuleCase(
            name: "a start without alert",
            body: #"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A","attributes":{}}}"#,
            status: 400, reason: "BadRequestPayload"),
        RuleCase(
            name: "an update carrying attributes",
            body: #"{"aps":{"timestamp":1,"event":"update","content-state":{},"attributes":{}}}"#, status: 400,
            reason: "BadRequestPayload"),
        RuleCase(
            name: "an end carrying attributes",
            body: #"{"aps":{"timestamp":1,"event":"end","content-state":{},"attributes":{}}}"#, status: 400,
            reason: "BadRequestPayload"),
        RuleCase(
            name: "a widgets push with content-changed 1", pushType: "widgets",
            topic: "com.example.crema.push-type.widgets",
            body: #"{"aps":{"content-changed":1}}"#, status: 400, reason: "BadRequestPayload"),
        RuleCase(
            name: "an alert push without aps.alert", pushType: "alert", topic: "com.example.crema",
            body: #"{"aps":{"sound":"chime.aiff"}}"#, status: 400, reason: "BadRequestPayload"),
    ]

    @Test("A malformed request gets Apple's status and reason, and is recorded", arguments: cases)
    func malformedRequest(rule: RuleCase) async throws {
        try await Harness.with { harness in
            var headers: [(String, String)] = []
            switch rule.authorization {
            case .valid: headers.append(("authorization", "bearer " + harness.jwt()))
            case .missing: break
            case .garbage: headers.append(("authorization", "bearer not.a.jwt"))
            case .expired:
                headers.append(("authorization", "bearer " + harness.jwt(issuedAt: Date().addingTimeInterval(-3700))))
            }
            if let pushType = rule.pushType { headers.append(("apns-push-type", pushType)) }
            if let topic = rule.topic { headers.append(("apns-topic", topic)) }
            headers += rule.extraHeaders
            let path = rule.path ?? "/3/device/\(Harness.randomToken())"

            let answer = try await harness.withRawClient { client in
                try await harness.raw(
                    client, method: rule.method, path: path, headers: headers, body: rule.body.map { Data($0.utf8) })
            }
            #expect(answer.status == rule.status)
            #expect(answer.reason == rule.reason)
            #expect(answer.headers.first(name: "apns-id") != nil)
            let record = try #require(harness.simulator.records().last)
            #expect(record.status == rule.status)
            #expect(record.reason == rule.reason)
        }
    }

    @Test("A well-formed raw request with the same headers is accepted (the table's baseline)")
    func baselineIsAccepted() async throws {
        try await Harness.with { harness in
            let baseline = RuleCase(name: "baseline", status: 200, reason: "")
            let answer = try await harness.withRawClient { client in
                try await harness.raw(
                    client, path: "/3/device/\(Harness.randomToken())",
                    headers: [
                        ("authorization", "bearer " + harness.jwt()), ("apns-push-type", baseline.pushType!),
                        ("apns-topic", baseline.topic!), ("apns-priority", "10"),
                    ],
                    body: Data(baseline.body!.utf8))
            }
            #expect(answer.status == 200)
            #expect(answer.reason == nil)
        }
    }
}
