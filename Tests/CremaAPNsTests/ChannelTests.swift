import CremaAPNs
import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNsSimulator
import Foundation
import NIOFoundationCompat
import NIOHTTP1
import Testing

@Suite("Broadcast channels are managed through APNs' channel API, against the simulator over HTTP/2 and TLS")
struct ChannelTests {
    static let otherBundleID = "com.example.othercafe"
    static let otherKey = APNsSigningKey.generate(keyID: "KEYB000002", teamID: "TEAMB00002")

    @Test("A channel is created, read, listed and deleted, its id only ever in apns-channel-id")
    func createReadListDelete() async throws {
        try await Harness.with { harness in
            let key = harness.key
            let (created, stored, read, listed, deleted, readAgain, listedAgain) = try await harness.withClient { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .latest, signedBy: key)
                let stored = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let id = try #require(created.channelID)
                return (
                    created, stored,
                    try await client.readChannel(id, bundleID: Harness.bundleID, environment: .sandbox, signedBy: key),
                    try await client.listChannels(bundleID: Harness.bundleID, environment: .sandbox, signedBy: key),
                    try await client.deleteChannel(id, bundleID: Harness.bundleID, environment: .sandbox, signedBy: key),
                    try await client.readChannel(id, bundleID: Harness.bundleID, environment: .sandbox, signedBy: key),
                    try await client.listChannels(bundleID: Harness.bundleID, environment: .sandbox, signedBy: key)
                )
            }
            #expect(created.status == 201)
            #expect(created.disposition == .accepted)
            #expect(created.requestID != nil)
            let id = try #require(created.channelID)
            #expect(Data(base64Encoded: id)?.count == 16)
            let secondID = try #require(stored.channelID)
            #expect(secondID != id)

            #expect(read.status == 200)
            #expect(read.storage == .latest)
            #expect(read.channelID == id)
            #expect(listed.status == 200)
            #expect(listed.channelIDs == [id, secondID])
            #expect(deleted.status == 204)
            #expect(readAgain.status == 400)
            #expect(readAgain.reason == "ChannelNotRegistered")
            #expect(readAgain.disposition == .channelGone)
            #expect(listedAgain.channelIDs == [secondID])

            let channels = harness.simulator.channels()
            #expect(channels.map(\.id) == [secondID])
            #expect(channels.first?.storage == APNsChannelStorage.none)
            #expect(channels.first?.bundleID == Harness.bundleID)

            let records = harness.simulator.records()
            #expect(records.map(\.method) == ["POST", "POST", "GET", "GET", "DELETE", "GET", "GET"])
            #expect(Set(records.map(\.path)) == ["/1/apps/com.example.crema/channels", "/1/apps/com.example.crema/all-channels"])
            #expect(records.allSatisfy { $0.keyID == Harness.keyID && $0.teamID == Harness.teamID })
            #expect(records.map(\.channelID) == [id, secondID, id, nil, id, id, nil])
            let body = try #require(records.first?.body)
            #expect(body == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        }
    }

    @Test("Creating past the per-app limit is refused with CannotCreateChannelConfig, and another app still has room")
    func limitIsPerApp() async throws {
        try await Harness.with(
            bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey], maxChannelsPerApp: 3
        ) { harness in
            let key = harness.key
            let (answers, other) = try await harness.withClient { client in
                var answers: [APNsChannelAnswer] = []
                for _ in 0..<4 {
                    answers.append(
                        try await client.createChannel(
                            bundleID: Harness.bundleID, environment: .production, storage: .none, signedBy: key))
                }
                let other = try await client.createChannel(
                    bundleID: Self.otherBundleID, environment: .production, storage: .none, signedBy: Self.otherKey)
                return (answers, other)
            }
            #expect(answers.prefix(3).map(\.status) == [201, 201, 201])
            #expect(answers[3].status == 400)
            #expect(answers[3].reason == "CannotCreateChannelConfig")
            #expect(answers[3].disposition == .channelLimit)
            #expect(answers[3].channelID == nil)
            #expect(other.status == 201)
            #expect(harness.simulator.channels().filter { $0.bundleID == Harness.bundleID }.count == 3)
        }
    }

    @Test("A channel APNs forgot is refused as ChannelNotRegistered and is no longer listed")
    func forgottenChannel() async throws {
        try await Harness.with { harness in
            let key = harness.key
            try await harness.withClient { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let id = try #require(created.channelID)
                let before = try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key)
                #expect(before.status == 200)

                // Through the control API, as a script would.
                let fault = try JSONEncoder().encode(APNsSimulatorFault.forgetChannel(id))
                let posted = try await harness.withRawClient { raw in
                    try await harness.raw(raw, path: "/sim/faults", headers: [("content-type", "application/json")], body: fault)
                }
                #expect(posted.status == 201)

                let after = try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key)
                #expect(after.status == 400)
                #expect(after.reason == "ChannelNotRegistered")
                #expect(after.broadcastDisposition == .channelGone)
                let listed = try await client.listChannels(bundleID: Harness.bundleID, environment: .sandbox, signedBy: key)
                #expect(listed.status == 200)
                #expect(listed.channelIDs.isEmpty)
                #expect(harness.simulator.channels().isEmpty)
                #expect(harness.simulator.records(channel: id).map(\.status) == [200, 400])
            }
        }
    }

    @Test("FeatureNotEnabled for one app refuses its channel calls and broadcasts, and not another app's")
    func featureNotEnabled() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey]) { harness in
            let key = harness.key
            try await harness.withClient { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let id = try #require(created.channelID)
                harness.simulator.inject(.featureNotEnabled(bundleID: Harness.bundleID))
                let create = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let list = try await client.listChannels(bundleID: Harness.bundleID, environment: .sandbox, signedBy: key)
                let send = try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key)
                let other = try await client.createChannel(
                    bundleID: Self.otherBundleID, environment: .sandbox, storage: .none, signedBy: Self.otherKey)
                for answer in [create.status, list.status, send.status] { #expect(answer == 400) }
                #expect([create.reason, list.reason, send.reason] == ["FeatureNotEnabled", "FeatureNotEnabled", "FeatureNotEnabled"])
                #expect(create.disposition == .configurationError)
                #expect(send.broadcastDisposition == .configurationError)
                #expect(other.status == 201)
                harness.simulator.clearFaults()
                let again = try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key)
                #expect(again.status == 200)
            }
        }
    }

    @Test("Channel calls and broadcasts signed by two teams' keys are each verified with their own key")
    func twoTeamsEachVerified() async throws {
        try await Harness.with(bundleIDs: [Harness.bundleID, Self.otherBundleID], otherKeys: [Self.otherKey]) { harness in
            let apps = [(harness.key, Harness.bundleID), (Self.otherKey, Self.otherBundleID)]
            let stranger = APNsSigningKey.generate(keyID: "KEYC000003", teamID: "TEAMC00003")
            let (statuses, refused) = try await harness.withClient { client in
                var statuses: [Int] = []
                for (key, bundleID) in apps {
                    let created = try await client.createChannel(
                        bundleID: bundleID, environment: .production, storage: .latest, signedBy: key)
                    statuses.append(created.status)
                    let id = try #require(created.channelID)
                    statuses.append(
                        try await client.broadcast(Harness.broadcast(channelID: id, bundleID: bundleID), signedBy: key).status)
                }
                let refused = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .production, storage: .none, signedBy: stranger)
                return (statuses, refused)
            }
            #expect(statuses == [201, 200, 201, 200])
            #expect(refused.status == 403)
            #expect(refused.reason == "InvalidProviderToken")
            #expect(refused.disposition == .configurationError)
            let records = harness.simulator.records()
            for (key, bundleID) in apps {
                let mine = records.filter { $0.path.hasSuffix("/" + bundleID) || $0.path.contains("/" + bundleID + "/") }
                #expect(mine.count == (bundleID == Harness.bundleID ? 3 : 2))
                #expect(mine.filter { $0.status < 300 }.allSatisfy { $0.keyID == key.keyID && $0.teamID == key.teamID })
            }
            #expect(records.last?.keyID == stranger.keyID)
        }
    }

    @Test("The management host is a connection of its own: device pushes and broadcasts share theirs")
    func managementHostHasItsOwnConnection() async throws {
        try await Harness.with { harness in
            let key = harness.key
            // Another authority for the same simulator: a separate host as far as the client can tell.
            let management = try #require(URL(string: "https://localhost:\(harness.simulator.port)"))
            try await harness.withClient(configure: { $0.manageChannels(at: management) }) { client in
                let created = try await client.createChannel(
                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key)
                let id = try #require(created.channelID)
                #expect(try await client.send(Harness.request(.liveactivity), signedBy: key).status == 200)
                #expect(try await client.broadcast(Harness.broadcast(channelID: id), signedBy: key).status == 200)
                #expect(try await client.listChannels(bundleID: Harness.bundleID, environment: .sandbox, signedBy: key).status == 200)
            }
            let records = harness.simulator.records()
            let managed = Set(records.filter { $0.path.hasPrefix("/1/") }.map(\.connectionID))
            let pushed = Set(records.filter { !$0.path.hasPrefix("/1/") }.map(\.connectionID))
            #expect(managed.count == 1)
            #expect(pushed.count == 1)
            #expect(managed.isDisjoint(with: pushed))
        }
    }

    @Test("An all-channels list larger than one HTTP/2 window comes back whole")
    func largeListComesBackWhole() async throws {
        try await Harness.with { harness in
            let key = harness.key
            // 2,500 ids of 24 characters make about 67 KB of JSON: more than the 64 KiB default stream window.
            let count = 2_500
            let (created, listed) = try await harness.withClient { client in
                // A few at a time: thousands at once would starve the other suites' simulators on a small machine.
                var created: Set<String> = []
                for _ in 0..<(count / 10) {
                    try await withThrowingTaskGroup(of: String?.self) { group in
                        for _ in 0..<10 {
                            group.addTask {
                                try await client.createChannel(
                                    bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: key
                                ).channelID
                            }
                        }
                        for try await id in group { if let id { created.insert(id) } }
                    }
                }
                return (created, try await client.listChannels(bundleID: Harness.bundleID, environment: .sandbox, signedBy: key))
            }
            #expect(created.count == count)
            #expect(listed.status == 200)
            #expect(Set(listed.channelIDs) == created)
            // More than the 64 KiB default stream window, so the client's larger window was needed.
            let bytes = try JSONSerialization.data(withJSONObject: ["channels": listed.channelIDs]).count
            #expect(bytes > 65_535)
        }
    }

    @Test("Malformed channel calls are refused with Apple's reasons")
    func malformedChannelCalls() async throws {
        try await Harness.with { harness in
            let jwt = harness.jwt()
            let auth = ("authorization", "bearer " + jwt)
            let created = try await harness.withClient { client in
                try await client.createChannel(bundleID: Harness.bundleID, environment: .sandbox, storage: .none, signedBy: harness.key)
            }
            let id = try #require(created.channelID)
            let path = "/1/apps/\(Harness.bundleID)/channels"
            let cases: [(String, HTTPMethod, String, [(String, String)], String?, Int, String)] = [
                ("no token", .POST, path, [], #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, 403, "MissingProviderToken"),
                ("a bad token", .GET, path, [("authorization", "bearer x.y.z"), ("apns-channel-id", id)], nil, 403, "InvalidProviderToken"),
                ("no push-type", .POST, path, [auth], #"{"message-storage-policy":0}"#, 400, "MissingPushType"),
                ("another push-type", .POST, path, [auth], #"{"message-storage-policy":0,"push-type":"alert"}"#, 400, "InvalidPushType"),
                ("a policy of 2", .POST, path, [auth], #"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, 400, "BadRequestParams"),
                ("no policy", .POST, path, [auth], #"{"push-type":"liveactivity"}"#, 400, "BadRequestParams"),
                ("no JSON", .POST, path, [auth], "policy=0", 400, "BadRequestPayload"),
                ("no body", .POST, path, [auth], nil, 400, "PayloadEmpty"),
                ("a push-type suffix on the app", .POST, "/1/apps/\(Harness.bundleID).push-type.liveactivity/channels", [auth],
                 #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, 400, "TopicDisallowed"),
                ("an app the simulator does not have", .POST, "/1/apps/com.example.stranger/channels", [auth],
                 #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, 400, "TopicDisallowed"),
                ("a read without a channel", .GET, path, [auth], nil, 400, "MissingChannelId"),
                ("a read of a channel that is not base64", .GET, path, [auth, ("apns-channel-id", "not base64!")], nil, 400, "BadChannelId"),
                ("a delete of an unknown channel", .DELETE, path, [auth, ("apns-channel-id", "AAAAAAAAAAAAAAAAAAAAAA==")], nil, 400, "ChannelNotRegistered"),
                ("a PUT", .PUT, path, [auth], nil, 405, "MethodNotAllowed"),
                ("a DELETE of all channels", .DELETE, "/1/apps/\(Harness.bundleID)/all-channels", [auth], nil, 405, "MethodNotAllowed"),
                ("a channel in the path", .GET, path + "/" + "abc", [auth], nil, 404, "BadPath"),
            ]
            try await harness.withRawClient { client in
                for (name, method, path, headers, body, status, reason) in cases {
                    let answer = try await harness.raw(client, method: method, path: path, headers: headers, body: body.map { Data($0.utf8) })
                    #expect(answer.status == status, "\(name)")
                    #expect(answer.reason == reason, "\(name)")
                    #expect(answer.headers.first(name: "apns-request-id") != nil, "\(name)")
                }
            }
            #expect(harness.simulator.channels().map(\.id) == [id])
        }
    }
}
