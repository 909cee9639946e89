import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaCore
import Crypto
import Foundation
import Testing

@testable import CremaAPNs

@Suite("Provider tokens (ES256 JWTs)")
struct ProviderTokenTests {
    @Test("A token has the ES256 header, the team and iat claims, and a raw 64-byte signature that verifies")
    func tokenShape() throws {
        let key = APNsSigningKey.generate(keyID: "KEY1234567", teamID: "TEAM123456")
        let issuedAt = Date(timeIntervalSince1970: 1_732_250_000)
        let jwt = ProviderTokenCache(key: key, lifetime: .seconds(3000), now: { issuedAt }).token().jwt
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(
            String(decoding: try #require(Self.decode(parts[0])), as: UTF8.self)
                == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(
            String(decoding: try #require(Self.decode(parts[1])), as: UTF8.self)
                == #"{"iss":"TEAM123456","iat":1732250000}"#)
        let signature = try #require(Self.decode(parts[2]))
        #expect(signature.count == 64)
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM)
        #expect(
            publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(rawRepresentation: signature),
                for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(!jwt.contains("="))
    }

    @Test("A cached token is reused until its lifetime has passed on the injected clock")
    func tokenIsReusedForItsLifetime() {
        let clock = ManualClock()
        let cache = ProviderTokenCache(
            key: .generate(keyID: "KEY1234567", teamID: "TEAM123456"), lifetime: .seconds(50 * 60), now: { clock.now() }
        )
        let first = cache.token()
        clock.advance(by: 49 * 60)
        #expect(cache.token() == first)
        clock.advance(by: 2 * 60)
        #expect(cache.token() != first)
    }

    @Test("The signing key reads back from its PKCS#8 PEM and rejects text that is not a key")
    func signingKeyPEMRoundTrip() throws {
        let key = APNsSigningKey.generate(keyID: "KEY1234567", teamID: "TEAM123456")
        #expect(key.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try APNsSigningKey(pem: key.pkcs8PEM, keyID: "KEY1234567", teamID: "TEAM123456")
        #expect(again.publicKeyPEM == key.publicKeyPEM)
        #expect(throws: APNsSigningKeyError.self) {
            try APNsSigningKey(pem: "hello", keyID: "KEY1234567", teamID: "TEAM123456")
        }
        #expect(throws: APNsSigningKeyError.self) {
            try APNsSigningKey(pem: key.pkcs8PEM, keyID: "", teamID: "TEAM123456")
        }
    }

    @Test("A token signed by a key the simulator does not know is refused with 403 InvalidProviderToken")
    func unknownKeyIsRefused() async throws {
        try await Harness.with { harness in
            let stranger = APNsSigningKey.generate(keyID: Harness.keyID, teamID: Harness.teamID)
            let response = try await harness.withClient {
                try await $0.send(Harness.request(.alert), signedBy: stranger)
            }
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
            #expect(response.disposition == .signingKeyRejected)
        }
    }

    @Test("A token from another team is refused with 403 InvalidProviderToken")
    func wrongTeamIsRefused() async throws {
        try await Harness.with { harness in
            let other = try APNsSigningKey(pem: harness.key.pkcs8PEM, keyID: Harness.keyID, teamID: "OTHERTEAM1")
            let response = try await harness.withClient { try await $0.send(Harness.request(.alert), signedBy: other) }
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("A token over an hour old is replaced once by the client and the push then succeeds")
    func expiredTokenIsRefreshedOnce() async throws {
        try await Harness.with { harness in
            let clock = StaleFirstClock()
            let request = Harness.request(.liveactivity, priority: 10)
            let response = try await harness.withClient(now: { clock.now() }) {
                try await $0.send(request, signedBy: harness.key)
            }

            #expect(response.status == 200)
            let records = harness.simulator.records(token: request.deviceToken)
            #expect(records.map(\.status) == [403, 200])
            #expect(records.first?.reason == "ExpiredProviderToken")
            #expect(Set(records.compactMap(\.tokenFingerprint)).count == 2)
            #expect(records.allSatisfy { $0.apnsID == request.apnsID.uuidString.lowercased() })
        }
    }

    @Test("One provider token serves many pushes")
    func oneTokenForManyPushes() async throws {
        try await Harness.with { harness in
            try await harness.withClient { client in
                for _ in 0..<10 { _ = try await client.send(Harness.request(.alert), signedBy: harness.key) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<20 {
                        group.addTask { _ = try await client.send(Harness.request(.widgets), signedBy: harness.key) }
                    }
                    try await group.waitForAll()
                }
            }
            let records = harness.simulator.records()
            #expect(records.count == 30)
            #expect(records.allSatisfy { $0.status == 200 })
            #expect(Set(records.compactMap(\.tokenFingerprint)).count == 1)
        }
    }

    @Test("A connection that changes its provider token twice within 20 minutes gets 429 TooManyProviderTokenUpdates")
    func tooManyTokenUpdates() async throws {
        try await Harness.with { harness in
            let token = Harness.randomToken()
            let statuses = try await harness.withRawClient { client in
                var answers: [(Int, String?)] = []
                for offset in [0.0, -60, -120] {
                    let answer = try await harness.raw(
                        client, path: "/3/device/\(token)",
                        headers: [
                            ("authorization", "bearer " + harness.jwt(issuedAt: Date().addingTimeInterval(offset))),
                            ("apns-push-type", "alert"), ("apns-topic", Harness.bundleID),
                        ],
                        body: Harness.body(.alert))
                    answers.append((answer.status, answer.reason))
                }
                return answers
            }
            #expect(statuses.map(\.0) == [200, 200, 429])
            #expect(statuses.last?.1 == "TooManyProviderTokenUpdates")
            // One connection carried all three, so the rule applied.
            #expect(Set(harness.simulator.records().map(\.connectionID)).count == 1)
        }
    }

    private static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
