import CremaAPNs
import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNsSimulator
import Foundation
import NIOFoundationCompat
import NIOHTTP1
import Testing

@Suite("One client and one simulator for several apps and keys")
struct MultiKeyTests {
    /// A second app of another team, with its own key.
    static let otherBundleID = "com.example.othercafe"
    static let otherKey = APNsSigningKey.generate(keyID: "KEYB000002", teamID: "TEAMB00002")

    @Test("Pushes signed by two teams' keys are each recorded with the key, team and app they were sent with")
    func twoTeamsShareOneClient() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey]) {
            harness in
            let apps = [(harness.key, Harness.bundleID), (Self.otherKey, Self.otherBundleID)]
            var sent: [String: (key: APNsSigningKey, bundleID: String, pushType: APNsPushType)] = [:]
            var requests: [(APNsRequest, APNsSigningKey)] = []
            for index in 0..<12 {
                let (key, bundleID) = apps[index % 2]
                let pushType = APNsPushType.allCases[index % APNsPushType.allCases.count]
                let request = Harness.request(pushType, bundleID: bundleID)
                sent[request.deviceToken] = (key, bundleID, pushType)
                requests.append((request, key))
            }
            let statuses = try await harness.withClient { client in
                // Half one after the other, alternating keys; half at once.
                var statuses: [Int] = []
                for (request, key) in requests.prefix(6) {
                    statuses.append(try await client.send(request, signedBy: key).status)
                }
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for (request, key) in requests.dropFirst(6) {
                        group.addTask { try await client.send(request, signedBy: key).status }
                    }
                    for try await status in group { statuses.append(status) }
                }
                return statuses
            }
            #expect(statuses == Array(repeating: 200, count: 12))

            let records = harness.simulator.records()
            #expect(records.count == 12)
            for record in records {
                let expected = try #require(sent[record.deviceToken])
                #expect(record.status == 200)
                #expect(record.keyID == expected.key.keyID)
                #expect(record.teamID == expected.key.teamID)
                #expect(record.topic == expected.pushType.topic(bundleID: expected.bundleID))
            }
            // One JWT per key, and no connection carries both keys' tokens.
            for key in [harness.key, Self.otherKey] {
                #expect(Set(records.filter { $0.keyID == key.keyID }.compactMap(\.tokenFingerprint)).count == 1)
            }
            let connectionsA = Set(records.filter { $0.keyID == harness.key.keyID }.map(\.connectionID))
            let connectionsB = Set(records.filter { $0.keyID == Self.otherKey.keyID }.map(\.connectionID))
            #expect(connectionsA.isDisjoint(with: connectionsB))

            // The control API shows the team too.
            let listed = try await harness.withRawClient { client in
                try await harness.raw(client, method: .GET, path: "/sim/requests", headers: [], body: nil)
            }
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: listed.body)) as? [[String: Any]])
            #expect(Set(json.compactMap { $0["teamID"] as? String }) == [Harness.teamID, Self.otherKey.teamID])
        }
    }

    @Test("A third key the simulator does not know is refused with 403 InvalidProviderToken, the others still pass")
    func unknownThirdKeyIsRefused() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey]) {
            harness in
            let stranger = APNsSigningKey.generate(keyID: "KEYC000003", teamID: "TEAMC00003")
            let (refused, first, second) = try await harness.withClient { client in
                (
                    try await client.send(Harness.request(.alert), signedBy: stranger),
                    try await client.send(Harness.request(.alert), signedBy: harness.key),
                    try await client.send(
                        Harness.request(.alert, bundleID: Self.otherBundleID), signedBy: Self.otherKey)
                )
            }
            #expect(refused.status == 403)
            #expect(refused.reason == "InvalidProviderToken")
            #expect(first.status == 200)
            #expect(second.status == 200)
            let record = try #require(harness.simulator.records().first)
            #expect(record.keyID == stranger.keyID)
            #expect(record.teamID == stranger.teamID)
            #expect(record.detail == "unknown kid")
        }
    }

    @Test("A known key signing for another team than its own is refused with 403 InvalidProviderToken")
    func keyOfAnotherTeamIsRefused() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey]) {
            harness in
            let borrowed = try APNsSigningKey(
                pem: Self.otherKey.pkcs8PEM, keyID: Self.otherKey.keyID, teamID: Harness.teamID)
            let response = try await harness.withClient {
                try await $0.send(Harness.request(.alert), signedBy: borrowed)
            }
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("A topic of an app the simulator was not given is refused, naming the allowed topics")
    func topicOfAnotherAppIsRefused() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey]) {
            harness in
            let request = Harness.request(.liveactivity, bundleID: "com.example.stranger")
            let response = try await harness.withClient { try await $0.send(request, signedBy: harness.key) }
            #expect(response.status == 400)
            #expect(response.reason == "DeviceTokenNotForTopic")
            let detail = try #require(harness.simulator.records().first?.detail)
            #expect(detail.contains("com.example.crema.push-type.liveactivity"))
            #expect(detail.contains("com.example.othercafe.push-type.liveactivity"))
        }
    }
}
