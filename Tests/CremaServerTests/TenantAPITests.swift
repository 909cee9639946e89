import CremaAPNs
import CremaAPNsKey
import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Tenants over the real API (docs/tenants.md): a key acts in its own tenant and stores only; what lies outside
/// answers 404 as if it did not exist, on every route family; keys Crema issues are shown once, kept as hashes,
/// rotate with an overlap and stop at revocation or expiry; `.p8` keys are stored sealed.
@Suite(.serialized) struct TenantAPITests {
    /// A second tenant, `harbor`, with keys issued through the admin API.
    struct Harbor {
        var pos: String
        var barista: String
        var dashboard: String
        var app: String
        var admin: String
    }

    static func bearer(_ key: String) -> String { "Bearer \(key)" }

    /// Issues a key through the admin API and returns it.
    static func issue(_ api: APIClient, tenant: String, role: String, stores: [String]? = nil, as adminKey: String = APIHarness.adminKey) async throws -> String {
        let stores = stores.map { #","stores":["# + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? ""
        let response = try await api.send(
            .post, "/v1/admin/tenants/\(tenant)/api-keys", idempotencyKey: UUID().uuidString, body: #"{"role":"\#(role)"\#(stores)}"#,
            rawKey: bearer(adminKey))
        #expect(response.status == .created, "\(response.text)")
        return try #require(response.json["key"] as? String)
    }

    static func harbor(_ api: APIClient, baristaStores: [String]? = nil) async throws -> Harbor {
        let created = try await api.send(.put, "/v1/admin/tenants/harbor", body: #"{"name":"Harbor Coffee"}"#, rawKey: bearer(APIHarness.adminKey))
        #expect(created.status == .created, "\(created.text)")
        let app = try await api.send(
            .put, "/v1/admin/tenants/harbor/apps/com.harbor.coffee", body: #"{"team_id":"HARBORTEAM"}"#, rawKey: bearer(APIHarness.adminKey))
        #expect(app.status == .created, "\(app.text)")
        return Harbor(
            pos: try await issue(api, tenant: "harbor", role: "pos"),
            barista: try await issue(api, tenant: "harbor", role: "barista", stores: baristaStores),
            dashboard: try await issue(api, tenant: "harbor", role: "dashboard"), app: try await issue(api, tenant: "harbor", role: "app"),
            admin: try await issue(api, tenant: "harbor", role: "admin"))
    }

    @Test("A key of one tenant gets 404 for another tenant's stores and orders, on every route family")
    func anotherTenantsDataIsNotFound() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore("market-st")
            let order = try await api.placeOrder(store: "market-st")
            let harbor = try await Self.harbor(api)
            let pos = Self.bearer(harbor.pos)

            // Orders: read, list, preview, deliveries, events, placing at the other tenant's store.
            #expect(try await api.send(.get, "/v1/orders/\(order)", rawKey: pos).errorCode == "unknown_order")
            #expect(try await api.send(.get, "/v1/orders/\(order)/preview", rawKey: pos).errorCode == "unknown_order")
            #expect(try await api.send(.get, "/v1/orders/\(order)/deliveries", rawKey: pos).errorCode == "unknown_order")
            let moved = try await api.send(
                .post, "/v1/orders/\(order)/events", idempotencyKey: "k1", body: #"{"type":"canceled","reason":"x"}"#, rawKey: pos)
            #expect(moved.status == .notFound && moved.errorCode == "unknown_order")
            #expect(try await api.send(.get, "/v1/orders?store=market-st", rawKey: pos).errorCode == "unknown_store")
            let placed = try await api.send(.post, "/v1/orders", idempotencyKey: "k2", body: APIClient.orderBody(store: "market-st"), rawKey: pos)
            #expect(placed.status == .notFound && placed.errorCode == "unknown_store")
            // Stores and the board.
            #expect(try await api.send(.get, "/v1/stores/market-st/board", rawKey: pos).errorCode == "unknown_store")
            // Tokens.
            let token = try await api.send(
                .put, "/v1/orders/\(order)/live-activity-token", body: #"{"token":"\#(String(repeating: "ab", count: 32))","environment":"sandbox"}"#,
                rawKey: Self.bearer(harbor.app))
            #expect(token.status == .notFound && token.errorCode == "unknown_order")
            // The dashboard stream.
            let ticket = try await api.send(
                .post, "/v1/stream/tickets", body: #"{"store_id":"market-st"}"#, rawKey: Self.bearer(harbor.dashboard))
            #expect(ticket.status == .notFound && ticket.errorCode == "unknown_store")
            // Administration: a tenant's admin key does not see another tenant.
            let keys = try await api.send(.get, "/v1/admin/tenants/default/api-keys", rawKey: Self.bearer(harbor.admin))
            #expect(keys.status == .notFound && keys.errorCode == "unknown_tenant")

            // Store ids are unique within a tenant: harbor's market-st is its own, and the default one is untouched.
            #expect(try await api.send(.put, "/v1/stores/market-st", body: #"{"name":"Harbor Market"}"#, rawKey: pos).status == .created)
            let board = try await api.send(.get, "/v1/stores/market-st/board", rawKey: Self.bearer(harbor.dashboard))
            #expect(board.status == .ok && (board.json["store"] as? [String: Any])?["name"] as? String == "Harbor Market")
            #expect((try await api.send(.get, "/v1/orders/\(order)", as: .pos)).json["state"] as? String == "queued")
            let home = try await api.send(.get, "/v1/stores/market-st/board", as: .dashboard)
            #expect((home.json["store"] as? [String: Any])?["name"] as? String == "Market St")
        }
    }

    @Test("A barista key limited to one store cannot move, read or list another store's orders")
    func aStoreLimitedKeyStaysInItsStores() async throws {
        try await APIHarness.run { api, _ in
            let harbor = try await Self.harbor(api, baristaStores: ["s1"])
            let pos = Self.bearer(harbor.pos)
            for store in ["s1", "s2"] {
                #expect(try await api.send(.put, "/v1/stores/\(store)", body: #"{"name":"Harbor \#(store)"}"#, rawKey: pos).status == .created)
            }
            func place(_ store: String) async throws -> String {
                let response = try await api.send(.post, "/v1/orders", idempotencyKey: UUID().uuidString, body: APIClient.orderBody(store: store), rawKey: pos)
                return try #require(response.json["id"] as? String)
            }
            let (first, second) = (try await place("s1"), try await place("s2"))
            let barista = Self.bearer(harbor.barista)
            let blocked = try await api.send(
                .post, "/v1/orders/\(second)/events", idempotencyKey: "b1", body: #"{"type":"started","barista":"Sam"}"#, rawKey: barista)
            #expect(blocked.status == .notFound && blocked.errorCode == "unknown_order")
            #expect(try await api.send(.get, "/v1/orders/\(second)", rawKey: pos).json["state"] as? String == "queued")
            let allowed = try await api.send(
                .post, "/v1/orders/\(first)/events", idempotencyKey: "b2", body: #"{"type":"started","barista":"Sam"}"#, rawKey: barista)
            #expect(allowed.status == .ok && allowed.json["state"] as? String == "preparing")
            #expect(try await api.send(.get, "/v1/stores/s2/board", rawKey: barista).errorCode == "unknown_store")
            #expect(try await api.send(.get, "/v1/orders?store=s2", rawKey: barista).errorCode == "unknown_store")
            #expect(try await api.send(.get, "/v1/stores/s1/board", rawKey: barista).status == .ok)

            // A POS key limited to s1 may not create or rename another store.
            let limitedPOS = Self.bearer(try await Self.issue(api, tenant: "harbor", role: "pos", stores: ["s1"]))
            let refused = try await api.send(.put, "/v1/stores/s3", body: #"{"name":"S3"}"#, rawKey: limitedPOS)
            #expect(refused.status == .forbidden && refused.errorCode == "store_not_permitted")
            #expect(try await api.send(.put, "/v1/stores/s1", body: #"{"name":"S1 renamed"}"#, rawKey: limitedPOS).status == .ok)
        }
    }

    @Test("An administrator creates a store in a tenant, which that tenant's keys see and others do not")
    func anAdministratorCreatesATenantsStore() async throws {
        try await APIHarness.run { api, _ in
            let harbor = try await Self.harbor(api)
            let created = try await api.send(
                .put, "/v1/admin/tenants/harbor/stores/pier-9", body: #"{"name":"Pier 9","timezone":"Asia/Tokyo"}"#,
                rawKey: Self.bearer(APIHarness.adminKey))
            #expect(created.status == .created && created.json["timezone"] as? String == "Asia/Tokyo", "\(created.text)")
            #expect(try await api.send(.get, "/v1/stores/pier-9/board", rawKey: Self.bearer(harbor.dashboard)).status == .ok)
            #expect(try await api.send(.get, "/v1/stores/pier-9/board", as: .dashboard).errorCode == "unknown_store")
            let elsewhere = try await api.send(
                .put, "/v1/admin/tenants/nowhere/stores/pier-9", body: #"{"name":"Pier 9"}"#, rawKey: Self.bearer(APIHarness.adminKey))
            #expect(elsewhere.status == .notFound && elsewhere.errorCode == "unknown_tenant")
            let notAdmin = try await api.send(.put, "/v1/admin/tenants/harbor/stores/pier-9", body: #"{"name":"Pier 9"}"#, rawKey: Self.bearer(harbor.pos))
            #expect(notAdmin.status == .forbidden)
        }
    }

    @Test("Issued keys are shown once, kept only as a hash, rotate with an overlap and stop when revoked or expired")
    func issuedKeysLifecycle() async throws {
        try await APIHarness.run { api, db in
            let harbor = try await Self.harbor(api)
            let admin = Self.bearer(APIHarness.adminKey)
            let listed = try await api.send(.get, "/v1/admin/tenants/harbor/api-keys", rawKey: admin)
            let keys = try #require(listed.json["keys"] as? [[String: Any]])
            #expect(keys.count == 5 && keys.allSatisfy { $0["key"] == nil })
            #expect(!listed.text.contains(harbor.pos))
            // The table holds no key, in any column.
            let dump = try await db.pool.withConnection { try await $0.query("SELECT api_keys::text AS row FROM api_keys") }
            let rows = try dump.map { try $0.decode("row", as: String.self) }
            #expect(rows.count == 5)
            for key in [harbor.pos, harbor.barista, harbor.dashboard, harbor.app, harbor.admin] {
                // The secret part follows `crema_<16 hex id>_` (it may itself hold underscores: base64url).
                let secret = String(key.dropFirst("crema_".count + 17))
                #expect(secret.count == 43)
                #expect(rows.allSatisfy { !$0.contains(secret) })
            }

            // Rotation: both keys work until the old one is revoked.
            let id = try #require(keys.first { $0["role"] as? String == "pos" }?["id"] as? String)
            let rotated = try await api.send(.post, "/v1/admin/tenants/harbor/api-keys/\(id)/rotate", idempotencyKey: "r1", rawKey: admin)
            #expect(rotated.status == .created && rotated.json["rotated_from"] as? String == id)
            let fresh = Self.bearer(try #require(rotated.json["key"] as? String))
            #expect(try await api.send(.put, "/v1/stores/s1", body: #"{"name":"S1"}"#, rawKey: Self.bearer(harbor.pos)).status == .created)
            #expect(try await api.send(.put, "/v1/stores/s1", body: #"{"name":"S1"}"#, rawKey: fresh).status == .ok)
            // A replay of the rotation answers the same key id, never the key again.
            let replay = try await api.send(.post, "/v1/admin/tenants/harbor/api-keys/\(id)/rotate", idempotencyKey: "r1", rawKey: admin)
            #expect(replay.json["id"] as? String == rotated.json["id"] as? String && replay.json["key"] == nil)
            #expect(replay.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            #expect(try await api.send(.delete, "/v1/admin/tenants/harbor/api-keys/\(id)", rawKey: admin).status == .noContent)
            let revoked = try await api.send(.get, "/v1/stores/s1/board", rawKey: Self.bearer(harbor.pos))
            #expect(revoked.status == .unauthorized && revoked.errorCode == "api_key_revoked")
            #expect(try await api.send(.get, "/v1/stores/s1/board", rawKey: fresh).status == .ok)

            // Expiry: a key past its expires_at is refused with its own code.
            _ = try await db.pool.withConnection {
                try await $0.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE role = 'dashboard'")
            }
            let expired = try await api.send(.get, "/v1/stores/s1/board", rawKey: Self.bearer(harbor.dashboard))
            #expect(expired.status == .unauthorized && expired.errorCode == "api_key_expired")
        }
    }

    @Test("A bundle id is each tenant's own: registering one another tenant has answers as for a new one, and neither admin sees the other's app")
    func aBundleIDIsEachTenantsOwn() async throws {
        try await APIHarness.run { api, _ in
            let harbor = try await Self.harbor(api)
            let created = try await api.send(.put, "/v1/admin/tenants/pier", body: #"{"name":"Pier"}"#, rawKey: Self.bearer(APIHarness.adminKey))
            #expect(created.status == .created, "\(created.text)")
            let pierAdmin = Self.bearer(try await Self.issue(api, tenant: "pier", role: "admin"))
            let harborAdmin = Self.bearer(harbor.admin)

            // Pier's admin registers a bundle id no tenant has, then harbor's: the same answer, no hint of harbor.
            let fresh = try await api.send(.put, "/v1/admin/tenants/pier/apps/com.pier.coffee", body: #"{"team_id":"PIERTEAM01"}"#, rawKey: pierAdmin)
            let taken = try await api.send(.put, "/v1/admin/tenants/pier/apps/com.harbor.coffee", body: #"{"team_id":"PIERTEAM01"}"#, rawKey: pierAdmin)
            #expect(fresh.status == .created && taken.status == .created, "\(taken.text)")
            /// The answer without what differs by request: the bundle id asked for and the time.
            func shape(_ response: APIResponse) -> [String: String] {
                response.json.filter { !["bundle_id", "created_at"].contains($0.key) }.mapValues { "\($0)" }
            }
            #expect(shape(taken) == shape(fresh) && Set(taken.json.keys) == Set(fresh.json.keys))
            #expect(Set(taken.headers.map(\.name)) == Set(fresh.headers.map(\.name)))
            #expect(taken.json["tenant"] as? String == "pier" && taken.json["bundle_id"] as? String == "com.harbor.coffee")
            #expect(!taken.text.contains("harbor\"") && !taken.text.contains("HARBORTEAM"))
            // Changing it again is pier's own business (200), and harbor's app keeps its team.
            let changed = try await api.send(.put, "/v1/admin/tenants/pier/apps/com.harbor.coffee", body: #"{"team_id":"PIERTEAM02"}"#, rawKey: pierAdmin)
            #expect(changed.status == .ok && changed.json["team_id"] as? String == "PIERTEAM02", "\(changed.text)")

            /// `tenant bundle_id team_id` of each app the admin lists.
            func apps(_ tenant: String, as key: String) async throws -> [String] {
                let listed = try await api.send(.get, "/v1/admin/tenants/\(tenant)/apps", rawKey: key)
                #expect(listed.status == .ok, "\(listed.text)")
                return (listed.json["apps"] as? [[String: Any]] ?? []).map { "\($0["tenant"]!) \($0["bundle_id"]!) \($0["team_id"]!)" }
            }
            #expect(try await apps("harbor", as: harborAdmin) == ["harbor com.harbor.coffee HARBORTEAM"])
            #expect(try await apps("pier", as: pierAdmin) == ["pier com.harbor.coffee PIERTEAM02", "pier com.pier.coffee PIERTEAM01"])
            #expect(try await api.send(.get, "/v1/admin/tenants/pier/apps", rawKey: harborAdmin).errorCode == "unknown_tenant")
            #expect(try await api.send(.get, "/v1/admin/tenants/harbor/apps", rawKey: pierAdmin).errorCode == "unknown_tenant")

            // Harbor registering its own bundle id again, now that pier has it too, is as before: a change of its own.
            let again = try await api.send(.put, "/v1/admin/tenants/harbor/apps/com.harbor.coffee", body: #"{"team_id":"HARBORTEAM"}"#, rawKey: harborAdmin)
            #expect(again.status == .ok && again.json["tenant"] as? String == "harbor", "\(again.text)")
        }
    }

    @Test("A .p8 is stored sealed under the master key; a malformed one is refused with invalid_apns_key")
    func apnsKeysAreSealed() async throws {
        try await APIHarness.run { api, db in
            _ = try await Self.harbor(api)
            let admin = Self.bearer(APIHarness.adminKey)
            let key = APNsSigningKey.generate(keyID: "HARBORKEY1", teamID: "HARBORTEAM")
            let pem = key.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
            let added = try await api.send(
                .post, "/v1/admin/tenants/harbor/apps/com.harbor.coffee/apns-keys", idempotencyKey: "p1",
                body: #"{"key_id":"HARBORKEY1","p8":"\#(pem)"}"#, rawKey: admin)
            #expect(added.status == .created, "\(added.text)")
            #expect(added.json["fingerprint"] as? String == key.fingerprint && added.json["state"] as? String == "active")
            #expect(added.json["storage"] as? String == "database" && !added.text.contains("PRIVATE KEY"))
            let dump = try await db.pool.withConnection { try await $0.query("SELECT apns_keys::text AS row FROM apns_keys") }
            let row = try #require(try dump.first?.decode("row", as: String.self))
            let body = key.pkcs8PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            #expect(!row.contains("PRIVATE KEY") && !row.contains(String(body.prefix(24))))
            // Nor does the request that carried it stay behind in plain text for replays: its key keeps a digest.
            let keys = try await db.pool.withConnection { try await $0.query("SELECT string_agg(idempotency_keys::text, ' ') AS rows FROM idempotency_keys") }
            let kept = try #require(try keys.first?.decode("rows", as: String.self))
            #expect(kept.contains("sha256:") && !kept.contains("PRIVATE KEY") && !kept.contains(String(body.prefix(24))))

            let malformed = try await api.send(
                .post, "/v1/admin/tenants/harbor/apps/com.harbor.coffee/apns-keys", idempotencyKey: "p2",
                body: #"{"key_id":"HARBORKEY2","p8":"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"}"#, rawKey: admin)
            #expect(malformed.status == .unprocessableContent && malformed.errorCode == "invalid_apns_key")
            let otherTenant = try await api.send(
                .post, "/v1/admin/tenants/harbor/apps/cafe.crema.example/apns-keys", idempotencyKey: "p3",
                body: #"{"key_id":"HARBORKEY3","p8":"\#(pem)"}"#, rawKey: admin)
            #expect(otherTenant.status == .notFound && otherTenant.errorCode == "unknown_app")
        }
    }
}
