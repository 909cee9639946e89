import CremaAPNsProtocol
import CremaAPNs
import CremaAPNsSimulator
import CremaCore
import Foundation
import Testing

@Suite("Pushes the client sends and the simulator accepts")
struct DeliveryTests {
    @Test(
        "An accepted push is answered 200 and recorded with exactly the headers sent", arguments: APNsPushType.allCases)
    func acceptedPushIsRecordedAsSent(pushType: APNsPushType) async throws {
        try await Harness.with { harness in
            let expiration = Date(timeIntervalSince1970: 1_732_253_600)
            let request = Harness.request(pushType, priority: 5, expiration: expiration, collapseID: "order-42")
            let response = try await harness.withClient { try await $0.send(request, signedBy: harness.key) }

            #expect(response.status == 200)
            #expect(response.reason == nil)
            #expect(response.apnsID == request.apnsID)
            #expect(response.disposition == .delivered)

            let records = harness.simulator.records(token: request.deviceToken)
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.status == 200)
            #expect(record.method == "POST")
            #expect(record.path == "/3/device/\(request.deviceToken)")
            #expect(record.httpVersion == "h2")
            #expect(record.pushType == pushType.rawValue)
            #expect(record.topic == pushType.topic(bundleID: Harness.bundleID))
            #expect(record.priority == "5")
            #expect(record.expiration == "1732253600")
            #expect(record.collapseID == "order-42")
            #expect(record.apnsID == request.apnsID.uuidString.lowercased())
            #expect(record.body == String(decoding: request.body, as: UTF8.self))
            #expect(record.keyID == Harness.keyID)
        }
    }

    @Test("Optional headers left nil are not sent at all")
    func optionalHeadersAreOmitted() async throws {
        try await Harness.with { harness in
            let request = Harness.request(.widgets)
            let response = try await harness.withClient { try await $0.send(request, signedBy: harness.key) }
            #expect(response.status == 200)
            let record = try #require(harness.simulator.records(token: request.deviceToken).first)
            #expect(record.priority == nil)
            #expect(record.expiration == nil)
            #expect(record.collapseID == nil)
        }
    }

    @Test("A push-to-start Live Activity with attributes and an alert is accepted")
    func liveActivityStartIsAccepted() async throws {
        try await Harness.with { harness in
            let request = Harness.request(.liveactivity, priority: 10, event: "start")
            let response = try await harness.withClient { try await $0.send(request, signedBy: harness.key) }
            #expect(response.status == 200)
        }
    }

    @Test("Sixty-four concurrent sends over one client all succeed")
    func concurrentSendsSucceed() async throws {
        try await Harness.with { harness in
            let statuses = try await harness.withClient { client in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<64 {
                        let pushType = APNsPushType.allCases[index % 3]
                        group.addTask {
                            try await client.send(Harness.request(pushType, priority: 5), signedBy: harness.key).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            #expect(statuses.count == 64)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(harness.simulator.records().count == 64)
            #expect(harness.simulator.records().allSatisfy { $0.httpVersion == "h2" })
        }
    }

    @Test("A non-2xx answer is returned as a response, not thrown")
    func refusalsAreReturned() async throws {
        try await Harness.with { harness in
            var request = Harness.request(.liveactivity)
            request.topic = Harness.bundleID  // the plain bundle ID: wrong for a Live Activity token
            let response = try await harness.withClient { try await $0.send(request, signedBy: harness.key) }
            #expect(response.status == 400)
            #expect(response.reason == "DeviceTokenNotForTopic")
            #expect(response.disposition == .retireToken(since: nil))
        }
    }
}
