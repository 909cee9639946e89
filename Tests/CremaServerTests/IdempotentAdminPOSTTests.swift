import CremaAPNs
import CremaAPNsKey
import Foundation
import HTTPTypes
import Testing

/// An administrative POST sent several times at once with one Idempotency-Key is performed once: the others wait for
/// it and get its answer, as duplicates of an order command do (`IdempotencyGate`).
@Suite struct IdempotentAdminPOSTTests {
    @Test("concurrent duplicates issue one key") func concurrentDuplicatesIssueOneKey() async throws {
        try await APIHarness.run { api, _ in
            let admin = "Bearer \(APIHarness.adminKey)"
            let before = try await Self.keyCount(api, admin)
            let responses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await api.send(.post, "/v1/admin/tenants/default/api-keys", idempotencyKey: "issue-once", body: #"{"role":"pos"}"#, rawKey: admin)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let performed = responses.filter { $0.status == .created && $0.headers[HTTPField.Name("Idempotent-Replayed")!] == nil }
            let replayed = responses.filter { $0.status == .created && $0.headers[HTTPField.Name("Idempotent-Replayed")!] == "true" }
            #expect(performed.count == 1, "\(responses.map(\.text))")
            #expect(replayed.count == 7, "\(responses.map(\.text))")
            // The replays answer the key's id without the key, shown once.
            let id = try #require(performed.first?.json["id"] as? String)
            #expect(replayed.allSatisfy { $0.json["id"] as? String == id && $0.json["key"] == nil })
            #expect(try await Self.keyCount(api, admin) == before + 1)
            // After the first answer, a retry gets it.
            let retry = try await api.send(.post, "/v1/admin/tenants/default/api-keys", idempotencyKey: "issue-once", body: #"{"role":"pos"}"#, rawKey: admin)
            #expect(retry.status == .created)
            #expect(retry.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
        }
    }

    @Test("a failed request frees its key for the retry") func aFailedRequestFreesItsKeyForTheRetry() async throws {
        try await APIHarness.run { api, _ in
            let admin = "Bearer \(APIHarness.adminKey)"
            let pem = APNsSigningKey.generate(keyID: "RETRYKEY01", teamID: "RETRYTEAM0").pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
            let add = { @Sendable in
                try await api.send(
                    .post, "/v1/admin/tenants/default/apps/com.retry.coffee/apns-keys", idempotencyKey: "retry-me",
                    body: #"{"key_id":"RETRYKEY01","p8":"\#(pem)"}"#, rawKey: admin)
            }
            // The app does not exist yet: the request fails after claiming its key.
            let refused = try await add()
            #expect(refused.status == .notFound && refused.errorCode == "unknown_app", "\(refused.text)")
            let app = try await api.send(.put, "/v1/admin/tenants/default/apps/com.retry.coffee", body: #"{"team_id":"RETRYTEAM0"}"#, rawKey: admin)
            #expect(app.status == .created, "\(app.text)")
            // The same request again is performed, not told to wait nor answered with the failure.
            let retried = try await add()
            #expect(retried.status == .created, "\(retried.text)")
            #expect(retried.headers[HTTPField.Name("Idempotent-Replayed")!] == nil)
        }
    }

    static func keyCount(_ api: APIClient, _ admin: String) async throws -> Int {
        let listed = try await api.send(.get, "/v1/admin/tenants/default/api-keys", rawKey: admin)
        return try #require(listed.json["keys"] as? [Any]).count
    }
}
