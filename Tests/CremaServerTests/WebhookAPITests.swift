import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Registering and managing webhook endpoints: what can be refused at registration is refused then, with a clear
/// error; the secret is shown once (docs/webhooks.md).
@Suite struct WebhookAPITests {
    /// A public address that needs no DNS: registration checks it and stores it; nothing is ever sent in these tests.
    static let publicURL = "https://93.184.215.14/hooks/crema"

    @Test("A host that resolves to a private address is refused without saying which address")
    func aPrivateAddressIsNotEchoed() async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            let refused = try await h.api.post("/v1/webhooks", as: .pos, #"{"url":"https://localhost:9/x","events":["order.changed"]}"#)
            #expect(refused.errorCode == "webhook_address_refused")
            #expect(!refused.text.contains("127.0.0.1") && !refused.text.contains("::1"), "\(refused.text)")
        }
    }

    @Test("A plain http:// receiver is refused unless private receivers are allowed: bodies carry customers' names")
    func plainHTTPNeedsThePrivateSetting() async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            let refused = try await h.api.post("/v1/webhooks", as: .pos, #"{"url":"http://93.184.215.14/hooks","events":["order.changed"]}"#)
            #expect(refused.errorCode == "invalid_field")
            #expect(refused.errorDetails["field"] as? String == "url")
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 0)
        }
    }

    @Test(
        "A URL that cannot be a receiver is refused with the field and the reason",
        arguments: [
            ("not a url", "invalid_field"), ("ftp://93.184.215.14/x", "invalid_field"), ("https://user:pw@93.184.215.14/", "invalid_field"),
            ("https://93.184.215.14/#frag", "invalid_field"), ("https://127.0.0.1:9/x", "webhook_address_refused"),
            ("https://10.1.2.3/", "webhook_address_refused"), ("https://169.254.169.254/latest/meta-data", "webhook_address_refused"),
            ("https://[::1]:8080/", "webhook_address_refused"), ("https://[::ffff:192.168.1.1]/", "webhook_address_refused"),
            ("https://nowhere.invalid/hooks", "webhook_address_refused"),
        ])
    func badURLsAreRefused(url: String, code: String) async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            let answer = try await h.api.post("/v1/webhooks", as: .pos, #"{"url":"\#(url)","events":["order.changed"]}"#)
            #expect(answer.errorCode == code, "\(url): \(answer.text)")
            #expect(answer.status.code == (code == "invalid_field" ? 400 : 422))
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 0)
        }
    }

    @Test("Unknown or missing event types are refused by name, and only pos and admin keys may register")
    func eventsAndRolesAreChecked() async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            let unknown = try await h.api.post("/v1/webhooks", as: .pos, #"{"url":"\#(Self.publicURL)","events":["order.placed"]}"#)
            #expect(unknown.errorCode == "invalid_field")
            #expect((unknown.errorDetails["reason"] as? String)?.contains("order.placed") == true)
            let none = try await h.api.post("/v1/webhooks", as: .pos, #"{"url":"\#(Self.publicURL)","events":[]}"#)
            #expect(none.errorCode == "invalid_field")
            for role in [Role.barista, .dashboard, .app] {
                let refused = try await h.api.post("/v1/webhooks", as: role, #"{"url":"\#(Self.publicURL)","events":["order.changed"]}"#)
                #expect(refused.status == .forbidden)
            }
        }
    }

    @Test("The secret is shown once: a retry with the same Idempotency-Key answers the endpoint without it, and so do the reads")
    func secretIsShownOnce() async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            let body = #"{"url":"\#(Self.publicURL)","events":["order.changed","token.retired"]}"#
            let created = try await h.api.post("/v1/webhooks", as: .pos, key: "hook-1", body)
            #expect(created.status == .created)
            let id = try #require(created.json["id"] as? String)
            let secret = try #require(created.json["secret"] as? String)
            #expect(secret.hasPrefix("whsec_") && secret.count == 70)
            let retried = try await h.api.post("/v1/webhooks", as: .pos, key: "hook-1", body)
            #expect(retried.status == .created)
            #expect(retried.json["id"] as? String == id)
            #expect(retried.json["secret"] == nil)
            let listed = try await h.api.send(.get, "/v1/webhooks", as: .pos)
            #expect((listed.json["webhooks"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
            #expect(!listed.text.contains(secret))
            // Stored sealed, never in clear.
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_endpoints WHERE strpos(encode(sealed_secret, 'escape'), \(secret)) > 0", as: Int.self) == 0)
            let shown = try await h.api.send(.get, "/v1/webhooks/\(id)", rawKey: "Bearer \(APIHarness.adminKey)")
            #expect(shown.status == .ok, "the bootstrap admin key acts on the default tenant, whose endpoint this is")
        }
    }

    @Test("Deleting an endpoint removes it and its deliveries; an unknown id is 404 unknown_webhook")
    func deleteAndUnknown() async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            let created = try await h.api.post("/v1/webhooks", as: .pos, #"{"url":"\#(Self.publicURL)","events":["order.changed"]}"#)
            let id = try #require(created.json["id"] as? String)
            #expect(try await h.api.send(.delete, "/v1/webhooks/\(id)", as: .pos).status == .noContent)
            let gone = try await h.api.send(.get, "/v1/webhooks/\(id)", as: .pos)
            #expect(gone.status == .notFound)
            #expect(gone.errorCode == "unknown_webhook")
            #expect(try await h.api.send(.delete, "/v1/webhooks/\(id)", as: .pos).errorCode == "unknown_webhook")
            #expect(try await h.api.send(.get, "/v1/webhooks/not-a-uuid/deliveries", as: .pos).errorCode == "invalid_field")
        }
    }

    @Test("Without CREMA_MASTER_KEY a webhook cannot be registered: 409 master_key_not_configured, nothing stored")
    func needsMasterKey() async throws {
        try await APIHarness.run(masterKey: false) { api, db in
            let answer = try await api.post("/v1/webhooks", as: .pos, #"{"url":"\#(Self.publicURL)","events":["order.changed"]}"#)
            #expect(answer.status == .conflict)
            #expect(answer.errorCode == "master_key_not_configured")
            #expect(try await db.scalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 0)
        }
    }
}
