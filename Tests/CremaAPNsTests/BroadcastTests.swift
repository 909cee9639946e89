import CremaAPNs
import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNsSimulator
import Foundation
import NIOFoundationCompat
import NIOHTTP1
import Testing

@Suite("Broadcasts reach a channel through POST /4/broadcasts, checked by the simulator in Apple's order")
struct BroadcastTests {
    @Test("A broadcast is accepted and recorded with Apple's headers, expiration 0 and no apns-topic")
    func acceptedAndRecorded() async throws {
        try await Harness.with { harness in
            let key = harness.key
            let (id, request, response) = try await harness.withClient { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let id = try #require(created.channelID)
                let request = Harness.broadcast(channelID: id, priority: 5)
                return (id, request, try await client.broadcast(request, signedBy: key))
            }
            #expect(response.status == 200)
            #expect(response.broadcastDisposition == .accepted)
            #expect(response.apnsID == request.requestID)
            #expect(response.uniqueID != nil)
            await harness.simulator.received(channel: id)
            let record = try #require(harness.simulator.records(channel: id).first)
            #expect(harness.simulator.records(channel: id).count == 1)
            #expect(record.method == "POST")
            #expect(record.path == "/4/broadcasts/apps/com.example.crema")
            #expect(record.httpVersion == "h2")
            #expect(record.channelID == id)
            #expect(record.pushType == "liveactivity")
            #expect(record.topic == nil)
            #expect(record.priority == "5")
            #expect(record.expiration == "0")
            #expect(record.apnsID == request.requestID.uuidString.lowercased())
            #expect(record.body == String(decoding: request.body, as: UTF8.self))
            #expect(record.keyID == Harness.keyID)

            // The control API filters by channel (its id percent-encoded: base64 has + / =).
            let encoded = try #require(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let (listed, channels) = try await harness.withRawClient { client in
                (
                    try await harness.raw(client, method: .GET, path: "/sim/requests?channel=" + encoded, headers: [], body: nil),
                    try await harness.raw(client, method: .GET, path: "/sim/channels", headers: [], body: nil)
                )
            }
            let requests = try #require(try JSONSerialization.jsonObject(with: Data(buffer: listed.body)) as? [[String: Any]])
            #expect(requests.count == 1)
            #expect(requests.first?["channelID"] as? String == id)
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(buffer: channels.body)) as? [[String: Any]])
            #expect(shown.count == 1)
            #expect(shown.first?["id"] as? String == id)
            #expect(shown.first?["bundleID"] as? String == Harness.bundleID)
            #expect(shown.first?["storage"] as? String == "none")
            #expect(shown.first?["createdAt"] != nil)
        }
    }

    @Test("A channel that stores the latest message takes a broadcast with an expiration date")
    func expirationOnAStoringChannel() async throws {
        try await Harness.with { harness in
            let key = harness.key
            let expiration = Date(timeIntervalSince1970: 1_795_000_000)
            let (id, response) = try await harness.withClient { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .production, storage: .latest, signedBy: key)
                let id = try #require(created.channelID)
                return (id, try await client.broadcast(Harness.broadcast(channelID: id, expiration: expiration), signedBy: key))
            }
            #expect(response.status == 200)
            #expect(harness.simulator.records(channel: id).first?.expiration == "1795000000")
        }
    }

    @Test("A TooManyRequests fault on broadcasts carries Retry-After into a later retry, and device pushes still pass")
    func tooManyRequests() async throws {
        try await Harness.with { harness in
            let key = harness.key
            try await harness.withClient { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let id = try #require(created.channelID)
                harness.simulator.inject(.broadcastStatus(429, reason: "TooManyRequests", retryAfter: 7, count: 1, channel: id))
                let push = try await client.send(Harness.request(.liveactivity), signedBy: key)
                let throttled = try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key)
                let next = try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key)
                #expect(push.status == 200)
                #expect(throttled.status == 429)
                #expect(throttled.reason == "TooManyRequests")
                #expect(throttled.retryAfter == 7)
                #expect(throttled.broadcastDisposition == .retryLater(after: 7))
                #expect(next.status == 200)
                #expect(harness.simulator.records(channel: id).map(\.detail) == ["fault: broadcast_status", nil])
            }
        }
    }

    @Test("The channel faults survive a round trip through the control API's JSON")
    func faultsRoundTrip() throws {
        let faults: [APNsSimulatorFault] = [
            .forgetChannel("AAAAAAAAAAAAAAAAAAAAAA=="),
            .broadcastStatus(429, reason: "TooManyRequests", retryAfter: 5, count: 2, channel: nil),
            .broadcastStatus(503, reason: "ServiceUnavailable", retryAfter: nil, count: 1, channel: "x"),
            .featureNotEnabled(bundleID: Harness.bundleID),
        ]
        for fault in faults {
            #expect(try JSONDecoder().decode(APNsSimulatorFault.self, from: JSONEncoder().encode(fault)) == fault)
        }
        let posted = Data(#"{"type":"broadcast_status","status":429,"reason":"TooManyRequests","retry_after":3}"#.utf8)
        #expect(
            try JSONDecoder().decode(APNsSimulatorFault.self, from: posted)
                == .broadcastStatus(429, reason: "TooManyRequests", retryAfter: 3, count: 1, channel: nil))
    }

    @Test("Every broadcast refusal comes back with Apple's reason, the first rule broken in Apple's order deciding")
    func refusalsInAppleOrder() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, "com.example.othercafe"]) { harness in
            let key = harness.key
            let (none, latest, other) = try await harness.withClient { client in
                var ids: [String] = []
                for (bundleID, storage) in [
                    (Harness.bundleID, APNsChannelStorage.none), (Harness.bundleID, .latest), ("com.example.othercafe", .none),
                ] {
                    let created = try await client.createChannel(
                        bundleID: bundleID, environment: .sandbox, storage: storage, signedBy: key)
                    ids.append(try #require(created.channelID))
                }
                return (ids[0], ids[1], ids[2])
            }
            let path = "/4/broadcasts/apps/\(Harness.bundleID)"
            let good: [String: String] = [
                "authorization": "bearer " + harness.jwt(), "apns-channel-id": none, "apns-push-type": "liveactivity",
                "apns-priority": "10", "apns-expiration": "0", "apns-request-id": UUID().uuidString.lowercased(),
            ]
            let body = String(decoding: Harness.broadcastBody(), as: UTF8.self)
            struct Case {
                var name: String
                var changes: [String: String?] = [:]
                var body: String?
                var method: HTTPMethod = .POST
                var path: String?
                var status: Int
                var reason: String?
            }
            let start = String(decoding: Harness.body(.liveactivity, event: "start"), as: UTF8.self)
            let cases: [Case] = [
                Case(name: "all good", status: 200),
                Case(name: "all good, push type in Apple's table spelling", changes: ["apns-push-type": "LiveActivity"], status: 200),
                Case(name: "a nonzero expiration on a storing channel", changes: ["apns-channel-id": latest, "apns-expiration": "1795000000"], status: 200),
                Case(name: "an end event", body: #"{"aps":{"timestamp":1732250000,"event":"end","content-state":{},"dismissal-date":1732251000}}"#, status: 200),
                Case(name: "no token, and no channel", changes: ["authorization": nil, "apns-channel-id": nil], status: 403, reason: "MissingProviderToken"),
                Case(name: "a token of no known key", changes: ["authorization": "bearer a.b.c", "apns-channel-id": nil], status: 403, reason: "InvalidProviderToken"),
                Case(name: "no channel, and a bad push type", changes: ["apns-channel-id": nil, "apns-push-type": "alert"], status: 400, reason: "MissingChannelId"),
                Case(name: "a channel that is not base64, and no priority", changes: ["apns-channel-id": "not base64!", "apns-priority": nil], status: 400, reason: "BadChannelId"),
                Case(name: "an unknown channel, and no push type", changes: ["apns-channel-id": "AAAAAAAAAAAAAAAAAAAAAA==", "apns-push-type": nil], status: 400, reason: "ChannelNotRegistered"),
                Case(name: "another app's channel", changes: ["apns-channel-id": other], status: 400, reason: "ChannelNotRegistered"),
                Case(name: "no push type, and a topic", changes: ["apns-push-type": nil, "apns-topic": "com.example.crema.push-type.liveactivity"], status: 400, reason: "MissingPushType"),
                Case(name: "an alert push type, and no priority", changes: ["apns-push-type": "alert", "apns-priority": nil], status: 400, reason: "InvalidPushType"),
                Case(name: "a topic with a push-type suffix, and no priority", changes: ["apns-topic": "com.example.crema.push-type.liveactivity", "apns-priority": nil], status: 400, reason: "TopicDisallowed"),
                Case(name: "no priority, and no expiration", changes: ["apns-priority": nil, "apns-expiration": nil], status: 400, reason: "BadPriority"),
                Case(name: "priority 7", changes: ["apns-priority": "7"], status: 400, reason: "BadPriority"),
                Case(name: "no expiration, and an empty body", changes: ["apns-expiration": nil], body: "", status: 400, reason: "BadExpirationDate"),
                Case(name: "a nonzero expiration on a channel that stores nothing", changes: ["apns-expiration": "1795000000"], status: 400, reason: "BadExpirationDate"),
                Case(name: "an expiration that is not a number", changes: ["apns-expiration": "soon"], status: 400, reason: "BadExpirationDate"),
                Case(name: "a request id that is not a UUID", changes: ["apns-request-id": "42"], status: 400, reason: "BadMessageId"),
                Case(name: "an empty body", body: "", status: 400, reason: "PayloadEmpty"),
                Case(name: "5121 bytes of start event", body: Self.padded(start, to: 5121), status: 413, reason: "PayloadTooLarge"),
                Case(name: "5120 bytes of update", body: Self.padded(body, to: 5120), status: 200),
                Case(name: "a start event", body: start, status: 400, reason: "BadRequestPayload"),
                Case(name: "not JSON", body: "hello", status: 400, reason: "BadRequestPayload"),
                Case(name: "no content-state", body: #"{"aps":{"timestamp":1732250000,"event":"update"}}"#, status: 400, reason: "BadRequestPayload"),
                Case(name: "a GET", method: .GET, status: 405, reason: "MethodNotAllowed"),
                Case(name: "no app in the path", path: "/4/broadcasts/apps/", status: 404, reason: "BadPath"),
            ]
            try await harness.withRawClient { client in
                for test in cases {
                    var headers = good
                    for (name, value) in test.changes { headers[name] = value }
                    let sent = test.body ?? body
                    let answer = try await harness.raw(
                        client, method: test.method, path: test.path ?? path, headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                        body: test.method == .GET ? nil : Data(sent.utf8))
                    #expect(answer.status == test.status, "\(test.name)")
                    #expect(answer.reason == test.reason, "\(test.name)")
                    #expect(answer.headers.first(name: "apns-request-id") != nil, "\(test.name)")
                    if test.status == 200 { #expect(answer.headers.first(name: "apns-unique-id") != nil, "\(test.name)") }
                }
            }
            // The simulator's own account says the same, and each refusal is explained.
            let refused = harness.simulator.records().filter { $0.path.hasPrefix("/4/") && $0.status != 200 }
            #expect(refused.count == cases.filter { $0.status != 200 }.count)
            #expect(refused.allSatisfy { $0.detail?.isEmpty == false })
        }
    }

    /// `json` (an object ending in `}}}` or `}}`) with a padding key added so it is exactly `bytes` long.
    static func padded(_ json: String, to bytes: Int) -> String {
        let prefix = #"{"pad":""#
        let suffix = #"","#
        // The padding replaces the object's opening brace, which the prefix brings back.
        let room = bytes - (json.utf8.count - 1) - prefix.utf8.count - suffix.utf8.count
        let padded = prefix + String(repeating: "x", count: max(0, room)) + suffix + json.dropFirst()
        precondition(padded.utf8.count == bytes, "the body to pad is too long")
        return padded
    }
}
