import CremaAPI
import CremaAPNs
import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaClock
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Logging
import Testing

/// Tenants end to end (docs/tenants.md): two brands with their own bundle ids, teams and keys in one Crema,
/// against one simulator that trusts both; keys activated, retired and rejected through the admin API while
/// it runs; customer tokens verified with each tenant's own keys.
@Suite(.serialized) struct TenantDeliveryTests {
    typealias H = DeliveryHarness
    static let harborApp = "com.harbor.coffee"
    static let harborKey = APNsSigningKey.generate(keyID: "HARBORKEY1", teamID: "HARBORTEAM")
    static let harborSecondKey = APNsSigningKey.generate(keyID: "HARBORKEY2", teamID: "HARBORTEAM")
    /// A key the simulator (standing in for Apple) was never given: APNs answers InvalidProviderToken.
    static let unknownKey = APNsSigningKey.generate(keyID: "HARBORKEY9", teamID: "HARBORTEAM")
    /// A third brand, `pier`, of another Apple team.
    static let pierKey = APNsSigningKey.generate(keyID: "PIERKEY001", teamID: "PIERTEAM01")
    /// A bundle id two tenants both register.
    static let sharedApp = "com.shared.coffee"
    static let admin = "Bearer \(APIHarness.adminKey)"

    /// Harbor's keys, as `Authorization` values.
    struct HarborKeys {
        var pos: String
        var barista: String
        var app: String
    }

    /// Creates the tenant `tenant` (`harbor` unless told) with its app `app`, of `key`'s team, and `key`, and returns
    /// keys of that tenant's.
    static func harbor(_ h: H, key: APNsSigningKey = harborKey, tenant: String = "harbor", app: String = harborApp) async throws -> HarborKeys {
        _ = try await h.api.send(.put, "/v1/admin/tenants/\(tenant)", body: #"{"name":"\#(tenant) coffee"}"#, rawKey: admin)
        let created = try await h.api.send(.put, "/v1/admin/tenants/\(tenant)/apps/\(app)", body: #"{"team_id":"\#(key.teamID)"}"#, rawKey: admin)
        #expect(created.status == .created, "\(created.text)")
        try await addKey(h, key, tenant: tenant, app: app)
        return HarborKeys(
            pos: "Bearer " + (try await TenantAPITests.issue(h.api, tenant: tenant, role: "pos")),
            barista: "Bearer " + (try await TenantAPITests.issue(h.api, tenant: tenant, role: "barista")),
            app: "Bearer " + (try await TenantAPITests.issue(h.api, tenant: tenant, role: "app")))
    }

    static func addKey(_ h: H, _ key: APNsSigningKey, active: Bool = true, tenant: String = "harbor", app: String = harborApp) async throws {
        let pem = key.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
        let response = try await h.api.send(
            .post, "/v1/admin/tenants/\(tenant)/apps/\(app)/apns-keys", idempotencyKey: UUID().uuidString,
            body: #"{"key_id":"\#(key.keyID)","p8":"\#(pem)","active":\#(active)}"#, rawKey: admin)
        #expect(response.status == .created, "\(response.text)")
    }

    /// Places a harbor order for `customer` at store h1, with an alert token, and makes it ready: one alert push.
    static func harborAlert(_ h: H, _ keys: HarborKeys, customer: String, token: String) async throws -> String {
        _ = try await h.api.send(.put, "/v1/stores/h1", body: #"{"name":"Harbor One"}"#, rawKey: keys.pos)
        let registered = try await h.api.send(
            .put, "/v1/customers/\(customer)/tokens/alert/\(token)", body: #"{"environment":"production"}"#, rawKey: keys.app)
        #expect(registered.status == .created, "\(registered.text)")
        let placed = try await h.api.send(
            .post, "/v1/orders", idempotencyKey: UUID().uuidString, body: APIClient.orderBody(store: "h1").replacingOccurrences(of: "c-9", with: customer),
            rawKey: keys.pos)
        let id = try #require(placed.json["id"] as? String, "\(placed.text)")
        let ready = try await h.api.send(
            .post, "/v1/orders/\(id)/events", idempotencyKey: UUID().uuidString, body: #"{"type":"ready","pickup_point":"counter"}"#,
            rawKey: keys.barista)
        #expect(ready.status == .ok, "\(ready.text)")
        return id
    }

    @Test("Two tenants' pushes each carry their own app's topic and are signed by their own team's key")
    func eachTenantSignsWithItsOwnKey() async throws {
        try await H.run(trusting: [Self.harborKey]) { h in
            let keys = try await Self.harbor(h)
            let harborToken = H.token(41)
            _ = try await Self.harborAlert(h, keys, customer: "c-1", token: harborToken)
            let defaultToken = H.token(42)
            try await h.registerCustomer("c-1", kind: "alert", token: defaultToken)
            let id = try await h.place(customer: "c-1")
            try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
            await h.simulator.received(token: harborToken)
            await h.simulator.received(token: defaultToken)

            let harbor = try #require(h.simulator.records(token: harborToken).first)
            #expect(harbor.status == 200 && harbor.topic == Self.harborApp)
            #expect(harbor.keyID == "HARBORKEY1" && harbor.teamID == "HARBORTEAM")
            let home = try #require(h.simulator.records(token: defaultToken).first)
            #expect(home.status == 200 && home.topic == H.bundleID)
            #expect(home.keyID == "TESTKEY001" && home.teamID == "TESTTEAM01")
            // The same customer ref in two tenants is two people: each got only its own tenant's push.
            #expect(h.simulator.records(token: harborToken).count == 1 && h.simulator.records(token: defaultToken).count == 1)
        }
    }

    @Test("Two tenants register the same bundle id: each one's customer gets a push signed with its own tenant's key")
    func theSameBundleIDInTwoTenantsIsTwoApps() async throws {
        try await H.run(trusting: [Self.harborKey, Self.pierKey]) { h in
            let harbor = try await Self.harbor(h, tenant: "harbor", app: Self.sharedApp)
            let pier = try await Self.harbor(h, key: Self.pierKey, tenant: "pier", app: Self.sharedApp)
            for keyring in h.keyrings {
                #expect(keyring.key(for: Self.sharedApp, tenant: "harbor")?.keyID == "HARBORKEY1")
                #expect(keyring.key(for: Self.sharedApp, tenant: "pier")?.keyID == "PIERKEY001")
                #expect(keyring.key(for: Self.sharedApp, tenant: "default") == nil)
                let both: Set = [TenantApp(tenant: "harbor", bundleID: Self.sharedApp), TenantApp(tenant: "pier", bundleID: Self.sharedApp)]
                #expect(keyring.apps.map { both.isSubset(of: $0) } == true)
            }
            // The same customer ref in both tenants, each with an alert token of its tenant's (default) app.
            let harborToken = H.token(43)
            let pierToken = H.token(44)
            _ = try await Self.harborAlert(h, harbor, customer: "c-1", token: harborToken)
            _ = try await Self.harborAlert(h, pier, customer: "c-1", token: pierToken)
            await h.simulator.received(token: harborToken)
            await h.simulator.received(token: pierToken)

            let toHarbor = h.simulator.records(token: harborToken)
            #expect(toHarbor.count == 1 && toHarbor.first?.status == 200 && toHarbor.first?.topic == Self.sharedApp)
            #expect(toHarbor.first?.keyID == "HARBORKEY1" && toHarbor.first?.teamID == "HARBORTEAM")
            let toPier = h.simulator.records(token: pierToken)
            #expect(toPier.count == 1 && toPier.first?.status == 200 && toPier.first?.topic == Self.sharedApp)
            #expect(toPier.first?.keyID == "PIERKEY001" && toPier.first?.teamID == "PIERTEAM01")

            // Each tenant lists its own app and key only.
            for (tenant, team, key) in [("harbor", "HARBORTEAM", "HARBORKEY1"), ("pier", "PIERTEAM01", "PIERKEY001")] {
                let apps = try await h.api.send(.get, "/v1/admin/tenants/\(tenant)/apps", rawKey: Self.admin).json["apps"] as? [[String: Any]] ?? []
                #expect(apps.map { "\($0["tenant"]!) \($0["bundle_id"]!) \($0["team_id"]!)" } == ["\(tenant) \(Self.sharedApp) \(team)"])
                let keys = try await h.api.send(.get, "/v1/admin/tenants/\(tenant)/apns-keys", rawKey: Self.admin).json["keys"] as? [[String: Any]] ?? []
                #expect(keys.compactMap { $0["key_id"] as? String } == [key])
            }
        }
    }

    @Test("Another tenant may register the default tenant's configured bundle id; each tenant's pushes to it are signed with its own key")
    func theConfiguredBundleIDIsTheDefaultTenantsOwn() async throws {
        try await H.run(trusting: [Self.harborKey]) { h in
            let keys = try await Self.harbor(h, app: H.bundleID)
            for keyring in h.keyrings {
                #expect(keyring.key(for: H.bundleID, tenant: "harbor")?.keyID == "HARBORKEY1")
                #expect(keyring.key(for: H.bundleID, tenant: "default")?.keyID == "TESTKEY001")
            }
            let harborToken = H.token(47)
            let defaultToken = H.token(48)
            _ = try await Self.harborAlert(h, keys, customer: "c-1", token: harborToken)
            _ = try await h.readyAlert(customer: "c-1", token: defaultToken)
            await h.simulator.received(token: harborToken)
            await h.simulator.received(token: defaultToken)
            let toHarbor = h.simulator.records(token: harborToken)
            #expect(toHarbor.count == 1 && toHarbor.first?.status == 200 && toHarbor.first?.topic == H.bundleID)
            #expect(toHarbor.first?.keyID == "HARBORKEY1")
            let toDefault = h.simulator.records(token: defaultToken)
            #expect(toDefault.count == 1 && toDefault.first?.status == 200 && toDefault.first?.topic == H.bundleID)
            #expect(toDefault.first?.keyID == "TESTKEY001")
            // An app added to the default tenant does not become the app of its existing tokens.
            let token = H.token(91)
            try await h.registerCustomer("c-1", kind: "alert", token: token)
            let extra = try await h.api.send(.put, "/v1/admin/tenants/default/apps/com.default.second", body: #"{"team_id":"TESTTEAM01"}"#, rawKey: Self.admin)
            #expect(extra.status == .created)
            let id = try await h.place(customer: "c-1")
            try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
            await h.simulator.received(token: token)
            #expect(h.simulator.records(token: token).first?.topic == H.bundleID)
        }
    }

    @Test("A tenant's own admin key cannot register a .p8 by path, which would read files on the server")
    func onlyTheBootstrapKeyNamesPaths() async throws {
        try await H.run { h in
            _ = try await Self.harbor(h)
            let harborAdmin = "Bearer " + (try await TenantAPITests.issue(h.api, tenant: "harbor", role: "admin"))
            let refused = try await h.api.send(
                .post, "/v1/admin/tenants/harbor/apps/\(Self.harborApp)/apns-keys", idempotencyKey: "p1",
                body: #"{"key_id":"HARBORKEY5","p8_path":"/etc/hostname"}"#, rawKey: harborAdmin)
            #expect(refused.status == .forbidden && refused.errorCode == "p8_path_not_permitted")
        }
    }

    @Test("A key activated through the admin API signs the next push without a restart; a retired one signs nothing")
    func activationAndRetirementTakeEffectWithoutRestart() async throws {
        try await H.run(trusting: [Self.harborKey, Self.harborSecondKey]) { h in
            let keys = try await Self.harbor(h)
            try await Self.addKey(h, Self.harborSecondKey, active: false)
            let first = H.token(51)
            _ = try await Self.harborAlert(h, keys, customer: "c-1", token: first)
            await h.simulator.received(token: first)
            #expect(h.simulator.records(token: first).first?.keyID == "HARBORKEY1")

            // The newest activation signs: it is stamped with the harness's clock, which stands still until moved.
            await h.clock.advance(1)
            let activated = try await h.api.send(
                .post, "/v1/admin/tenants/harbor/apps/\(Self.harborApp)/apns-keys/HARBORKEY2/activate", idempotencyKey: "a1", rawKey: Self.admin)
            #expect(activated.status == .ok && activated.json["state"] as? String == "active")
            let second = H.token(52)
            _ = try await Self.harborAlert(h, keys, customer: "c-2", token: second)
            await h.simulator.received(token: second)
            #expect(h.simulator.records(token: second).first?.keyID == "HARBORKEY2")

            let retired = try await h.api.send(.delete, "/v1/admin/tenants/harbor/apps/\(Self.harborApp)/apns-keys/HARBORKEY2", rawKey: Self.admin)
            #expect(retired.status == .noContent)
            let third = H.token(53)
            _ = try await Self.harborAlert(h, keys, customer: "c-3", token: third)
            await h.simulator.received(token: third)
            #expect(h.simulator.records(token: third).first?.keyID == "HARBORKEY1")
            let listed = try await h.api.send(.get, "/v1/admin/tenants/harbor/apns-keys", rawKey: Self.admin)
            let states = (listed.json["keys"] as? [[String: Any]] ?? []).map { "\($0["key_id"]!)=\($0["state"]!)" }.sorted()
            #expect(states == ["HARBORKEY1=active", "HARBORKEY2=retired"])
        }
    }

    @Test("A key APNs rejects is marked rejected and its pushes wait, uncounted, until a good key is activated")
    func aRejectedKeyHoldsPushesInsteadOfDeadLettering() async throws {
        try await H.run(trusting: [Self.harborKey]) { h in
            let keys = try await Self.harbor(h, key: Self.unknownKey)
            let token = H.token(61)
            let id = try await Self.harborAlert(h, keys, customer: "c-1", token: token)
            await h.simulator.received(token: token)
            #expect(h.simulator.records(token: token).first?.reason == "InvalidProviderToken")
            // A key APNs accepts: the waiting push goes out with it, once its hold is over (`drained` moves the clock
            // there rather than waiting). It can only be claimed again once the refused attempt was recorded, and the
            // key marked before that.
            try await Self.addKey(h, Self.harborKey)
            #expect(try await h.drained(id))
            await h.simulator.received(token: token, count: 2)
            let records = h.simulator.records(token: token)
            #expect(records.count == 2 && records.last?.keyID == "HARBORKEY1")

            let listing = try await h.api.send(.get, "/v1/admin/tenants/harbor/apns-keys", rawKey: Self.admin).json["keys"] as? [[String: Any]] ?? []
            let refused = try #require(listing.first { $0["key_id"] as? String == "HARBORKEY9" })
            #expect(refused["state"] as? String == "rejected")
            #expect((refused["rejected_reason"] as? String)?.contains("InvalidProviderToken") == true)
            #expect(h.keyrings.allSatisfy { $0.key(for: Self.harborApp, tenant: "harbor")?.keyID == "HARBORKEY1" })
            // Not dead-lettered, and the refused attempt did not count: the second claim is attempt 1.
            let log = try await h.api.send(.get, "/v1/orders/\(id)/deliveries", rawKey: keys.pos).json["deliveries"] as? [[String: Any]] ?? []
            let alert = try #require(log.first { $0["push_type"] as? String == "alert" && $0["order_event"] as? String == "ready" })
            #expect(["inflight", "sent"].contains(alert["state"] as? String) && alert["attempts"] as? Int == 1, "\(alert)")
        }
    }

    @Test("A dispatcher without a key for an app leaves its rows for one that has it")
    func anInstanceWithoutTheKeyLeavesTheRows() async throws {
        try await TestDatabase.with { db in
            let service = OrderService(database: CremaDatabase(pool: db.pool, clock: .system), defaultBundleID: "cafe.crema.test", clock: .system)
            let admin = AdminService(database: service.database, masterKey: try MasterKey(base64: APIHarness.masterKey), clock: service.clock)
            _ = try await admin.putTenant(id: "harbor", name: "Harbor")
            _ = try await admin.putApp(tenant: "harbor", bundleID: Self.harborApp, teamID: "HARBORTEAM")
            _ = try await service.database.stores.put(id: "h1", name: "H1", timezone: "UTC", tenant: "harbor")
            let scope = TenantScope(tenant: "harbor")
            _ = try await service.database.tokens.putCustomerToken(
                customerRef: "c-1", tenant: "harbor", kind: .alert, token: H.token(71), environment: .production, bundleID: nil, replaces: nil, limit: 20)
            let placed = try await service.place(
                OrderPlacement(
                    storeID: "h1", posRef: "T-1", customerRef: "c-1", displayName: "Ana", locale: "en", items: [OrderItem(name: "Latte")],
                    eta: Date().addingTimeInterval(600)),
                in: scope, role: .pos, request: IdempotentRequest(scope: "pos", key: "k", path: "p", body: "{}"))
            let id = try #require(UUID(uuidString: (try JSONSerialization.jsonObject(with: Data(placed.body.utf8)) as? [String: Any])?["id"] as? String ?? ""))
            _ = try await service.apply(
                .ready(pickupPoint: nil), to: id, in: scope, expectedVersion: nil, role: .barista,
                request: IdempotentRequest(scope: "barista", key: "k2", path: "p", body: "{}"))

            // This instance signs only the default app: harbor's alert is not claimed.
            let keyring = SigningKeyring(
                repository: service.database.apnsKeys, masterKey: nil, configured: ["cafe.crema.test": APNsSigningKey.generate(keyID: "TESTKEY001", teamID: "TESTTEAM01")],
                logger: Logger(label: "test"), clock: service.clock)
            try await keyring.reload()
            #expect(keyring.apps == [TenantApp(tenant: "default", bundleID: "cafe.crema.test")])
            #expect(try await service.database.deliveries.claim(limit: 10, lease: .seconds(60), apps: keyring.apps, now: Date()).isEmpty)
            // Nor does one with a key for the same bundle id in another tenant: that is another tenant's app.
            let sameBundleElsewhere: Set = [TenantApp(tenant: "default", bundleID: Self.harborApp)]
            #expect(try await service.database.deliveries.claim(limit: 10, lease: .seconds(60), apps: sameBundleElsewhere, now: Date()).isEmpty)
            // Another instance that holds harbor's key claims it.
            let claimed = try await service.database.deliveries.claim(
                limit: 10, lease: .seconds(60), apps: [TenantApp(tenant: "harbor", bundleID: Self.harborApp)], now: Date())
            #expect(claimed.count == 1 && claimed.first?.bundleID == Self.harborApp && claimed.first?.topic == Self.harborApp)
        }
    }

    @Test("A tenant with ten thousand pushes due holds another tenant's push back by a turn, not by its backlog")
    func oneTenantsBacklogDoesNotStarveAnother() async throws {
        try await H.run(dispatchHeld: true, trusting: [Self.harborKey]) { h in
            // One push of each tenant first, so both apps' connections and provider tokens are warm.
            let keys = try await Self.harbor(h)
            _ = try await Self.harborAlert(h, keys, customer: "c-2", token: H.token(52))
            let flood = H.token(51)
            let id = try await h.readyAlert(customer: "c-1", token: flood)
            h.startDispatching()
            await h.simulator.received(token: H.token(52))
            #expect(try await h.drained(id))

            // The default tenant's alert, copied into a backlog of 10,000 due, written behind the dispatcher's back
            // (no announcement): its poll finds them.
            let order = try #require(UUID(uuidString: id))
            let backlog = try await h.db.pool.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                                 push_type, priority, topic, collapse_id, body, expires_at, state, reason_code, reason,
                                                 run_at, la_event, apns_timestamp, bundle_id, created_at)
                    SELECT tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id, push_type, priority, topic,
                           collapse_id, body, expires_at, 'pending', reason_code, reason, run_at, la_event, apns_timestamp, bundle_id, created_at
                    FROM delivery_outbox, generate_series(1, 10000)
                    WHERE order_id = \(order) AND push_type = 'alert' AND state = 'sent'
                    RETURNING 1
                    """
                ).count
            }
            #expect(backlog == 10_000)
            // The poll interval passes (a worker's poll counts from when it last asked the database, so one move is enough).
            await h.clock.advance(0.001)
            await h.simulator.received(token: flood, count: 200)

            // Harbor's next push, committed while the backlog drains.
            let harborToken = H.token(53)
            _ = try await Self.harborAlert(h, keys, customer: "c-3", token: harborToken)
            let atCommit = h.simulator.records(token: flood).count
            await h.simulator.received(token: harborToken)
            let atReceipt = h.simulator.records(token: flood).count
            // First come, first served, it would have waited for the rest of the 10,000; by turns, for what was in
            // flight and a claim (64 a worker), give or take the sends that overlap its own.
            #expect(atReceipt - atCommit < 1_000, "harbor's push waited for \(atReceipt - atCommit) of the default tenant's")
            #expect(atReceipt < 5_000)
        }
    }

    @Test("The keyring reads newly activated keys once a minute has passed on its clock, not before")
    func theKeyringReloadsWithinAMinute() async throws {
        try await TestDatabase.with { db in
            let database = CremaDatabase(pool: db.pool, clock: .system)
            let admin = AdminService(database: database, masterKey: try MasterKey(base64: APIHarness.masterKey), clock: .system)
            _ = try await admin.putTenant(id: "harbor", name: "Harbor")
            _ = try await admin.putApp(tenant: "harbor", bundleID: Self.harborApp, teamID: "HARBORTEAM")
            let clock = TestClock(Date(timeIntervalSince1970: 1_795_000_000))
            let keyring = SigningKeyring(
                repository: database.apnsKeys, masterKey: admin.masterKey, logger: Logger(label: "test"), clock: clock.crema)
            try await keyring.reloadIfDue()
            #expect(keyring.key(for: Self.harborApp, tenant: "harbor") == nil)
            _ = try await admin.addAPNsKey(
                tenant: "harbor", bundleID: Self.harborApp, .init(keyID: "HARBORKEY1", p8: Self.harborKey.pkcs8PEM))
            await clock.advance(59)
            try await keyring.reloadIfDue()
            #expect(keyring.key(for: Self.harborApp, tenant: "harbor") == nil)
            await clock.advance(1)
            try await keyring.reloadIfDue()
            #expect(keyring.key(for: Self.harborApp, tenant: "harbor")?.fingerprint == Self.harborKey.fingerprint)
            _ = try await admin.setAPNsKey(.retired, tenant: "harbor", bundleID: Self.harborApp, keyID: "HARBORKEY1")
            await clock.advance(60)
            try await keyring.reloadIfDue()
            #expect(keyring.key(for: Self.harborApp, tenant: "harbor") == nil)
        }
    }

    @Test("A customer token is verified with its own tenant's keys only, and reads only that tenant's orders")
    func customerTokensArePerTenant() async throws {
        try await H.run { h in
            let keys = try await Self.harbor(h)
            let secret = "harbor-customer-secret-0123456789abcdef"
            let put = try await h.api.send(
                .put, "/v1/admin/tenants/harbor/customer-tokens",
                body: #"{"issuer":"https://harbor.example","audience":"crema","keys":[{"algorithm":"hs256","secret":"\#(secret)"}]}"#,
                rawKey: Self.admin)
            #expect(put.status == .ok, "\(put.text)")
            #expect(!put.text.contains(secret))
            let harborOrder = try await Self.harborAlert(h, keys, customer: "c-1", token: H.token(81))
            let homeOrder = try await h.place(customer: "c-1")
            typealias F = CustomerTokenFixtures
            let harborClaims = F.Claims(sub: "c-1", iss: "https://harbor.example", aud: "crema", tenant: "harbor")

            let harborToken = try await F.hs256(harborClaims, secret: secret)
            let mine = try await h.api.send(.get, "/v1/me/orders", rawKey: "Bearer \(harborToken)")
            let ids = (mine.json["orders"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(mine.status == .ok && ids == [harborOrder], "\(mine.text)")
            #expect(try await h.api.send(.get, "/v1/me/orders/\(homeOrder)", rawKey: "Bearer \(harborToken)").status == .notFound)

            // Signed with the default tenant's secret but naming harbor: harbor's keys refuse it.
            let forged = try await F.hs256(harborClaims)
            #expect(try await h.api.send(.get, "/v1/me/orders", rawKey: "Bearer \(forged)").errorCode == "token_signature_invalid")
            // Signed with harbor's secret but naming the default tenant: the default tenant's keys refuse it.
            let crossed = try await F.hs256(F.Claims(sub: "c-1"), secret: secret)
            #expect(try await h.api.send(.get, "/v1/me/orders", rawKey: "Bearer \(crossed)").errorCode == "token_signature_invalid")
            // A tenant with no settings refuses its tokens.
            let nowhere = try await F.hs256(F.Claims(sub: "c-1", tenant: "nowhere"), secret: secret)
            #expect(try await h.api.send(.get, "/v1/me/orders", rawKey: "Bearer \(nowhere)").errorCode == "token_tenant_unknown")
            // The default tenant's customer c-1 sees only the default tenant's order.
            let home = try await h.api.send(.get, "/v1/me/orders", rawKey: "Bearer \(try await F.token(for: "c-1"))")
            #expect((home.json["orders"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == [homeOrder])
        }
    }
}
