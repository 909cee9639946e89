public import CremaAPI
import CremaClock
import CremaCore
public import CremaService
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The administration routes (docs/design.md §9.1, docs/tenants.md), role `admin`: tenants, their apps, APNs keys
/// and API keys. The bootstrap key (`CREMA_ADMIN_KEY`) administers every tenant, a tenant's admin key its own;
/// another tenant answers 404. Secrets go one way: a `.p8` is sealed and an API key shown once, never listed.
struct AdminRoutes {
    let admin: AdminService
    let apnsKeysChanged: @Sendable () async -> Void
    let customerTokensChanged: @Sendable () async -> Void
    /// Each tenant's load limits, forgotten here when changed so this process applies them at once.
    let limits: TenantLimitsDirectory
    /// Forgets a key revoked here, so this process refuses it at once.
    let apiKeyCache: APIKeyCache

    func register(on router: Router<CremaRequestContext>) {
        router.get("/v1/admin/tenants") { request, context in try await self.tenants(request, context) }
        router.put("/v1/admin/tenants/{tenant}") { request, context in try await self.putTenant(request, context) }
        router.get("/v1/admin/tenants/{tenant}") { request, context in try await self.tenant(request, context) }
        router.get("/v1/admin/tenants/{tenant}/apps") { request, context in try await self.apps(request, context) }
        router.put("/v1/admin/tenants/{tenant}/apps/{bundle_id}") { request, context in try await self.putApp(request, context) }
        router.put("/v1/admin/tenants/{tenant}/stores/{store}") { request, context in try await self.putStore(request, context) }
        router.get("/v1/admin/tenants/{tenant}/apns-keys") { request, context in try await self.apnsKeys(request, context) }
        router.post("/v1/admin/tenants/{tenant}/apps/{bundle_id}/apns-keys") { request, context in try await self.addAPNsKey(request, context) }
        router.post("/v1/admin/tenants/{tenant}/apps/{bundle_id}/apns-keys/{key_id}/activate") { request, context in
            try await self.activateAPNsKey(request, context)
        }
        router.delete("/v1/admin/tenants/{tenant}/apps/{bundle_id}/apns-keys/{key_id}") { request, context in
            try await self.retireAPNsKey(request, context)
        }
        router.get("/v1/admin/tenants/{tenant}/api-keys") { request, context in try await self.apiKeys(request, context) }
        router.post("/v1/admin/tenants/{tenant}/api-keys") { request, context in try await self.issueAPIKey(request, context) }
        router.post("/v1/admin/tenants/{tenant}/api-keys/{id}/rotate") { request, context in try await self.rotateAPIKey(request, context) }
        router.delete("/v1/admin/tenants/{tenant}/api-keys/{id}") { request, context in try await self.revokeAPIKey(request, context) }
        router.put("/v1/admin/tenants/{tenant}/customer-tokens") { request, context in try await self.putCustomerTokens(request, context) }
        router.get("/v1/admin/tenants/{tenant}/customer-tokens") { request, context in try await self.customerTokens(request, context) }
        router.put("/v1/admin/tenants/{tenant}/limits") { request, context in try await self.putLimits(request, context) }
        router.get("/v1/admin/tenants/{tenant}/limits") { request, context in try await self.tenantLimits(request, context) }
    }

    // MARK: - Limits

    /// Only the operator's bootstrap key sets limits: they protect every other tenant from this one, so the tenant's own
    /// admin key may read them but not raise them.
    func putLimits(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        guard try context.presentedKey().tenant == nil else { throw APIError.limitsNeedOperator }
        let body = try WireCoding.decode(TenantLimitsDocument.self, from: try await request.bodyData(context: context))
        let overrides = try body.overrides()
        try await admin.putLimits(overrides, tenant: tenant)
        limits.forget(tenant)
        context.logger.info("tenant limits set", metadata: ["tenant": "\(tenant)"])
        return try JSONResponse.make(.ok, TenantLimitsDocument(limits.defaults.overridden(by: overrides), own: overrides))
    }

    func tenantLimits(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        let overrides = try await admin.limitOverrides(tenant: tenant)
        return try JSONResponse.make(
            .ok, TenantLimitsDocument(limits.defaults.overridden(by: overrides ?? TenantLimitOverrides()), own: overrides))
    }

    // MARK: - Customer tokens

    func putCustomerTokens(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        let body = try WireCoding.decode(CustomerTokenSettingsPutRequest.self, from: try await request.bodyData(context: context))
        let saved = try await admin.putCustomerTokenSettings(tenant: tenant, body.change)
        await customerTokensChanged()
        return try JSONResponse.make(.ok, CustomerTokenSettingsResponse(saved))
    }

    func customerTokens(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        guard let settings = try await admin.customerTokenSettings(tenant: tenant) else { throw APIError.customerTokensNotConfigured }
        return try JSONResponse.make(.ok, CustomerTokenSettingsResponse(settings))
    }

    // MARK: - Tenants and apps

    func tenants(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let principal = try context.presentedKey()
        guard principal.role == .admin else { throw APIError.forbidden(role: principal.role, allowed: [.admin]) }
        let tenants = try await admin.tenants(only: principal.tenant)
        return try JSONResponse.make(.ok, TenantListResponse(tenants: tenants.map(TenantResponse.init)))
    }

    func putTenant(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        let principal = try context.authorizeAdmin(tenant: tenant)
        // Only the bootstrap key creates tenants; a tenant's own admin key may rename its tenant.
        if principal.tenant != nil, try await admin.tenant(id: tenant) == nil { throw APIError.unknownTenant(tenant) }
        let body = try WireCoding.decode(TenantPutRequest.self, from: try await request.bodyData(context: context))
        let (saved, created) = try await admin.putTenant(id: tenant, name: body.name)
        return try JSONResponse.make(created ? .created : .ok, TenantResponse(saved))
    }

    func tenant(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        _ = try context.authorizeAdmin(tenant: tenant)
        guard let record = try await admin.tenant(id: tenant) else { throw APIError.unknownTenant(tenant) }
        return try JSONResponse.make(.ok, TenantResponse(record))
    }

    func apps(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        let apps = try await admin.apps(tenant: tenant)
        return try JSONResponse.make(.ok, AppListResponse(apps: apps.map(AppResponse.init)))
    }

    func putApp(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        _ = try context.authorizeAdmin(tenant: tenant)
        let bundleID = try context.pathParameter("bundle_id")
        let body = try WireCoding.decode(AppPutRequest.self, from: try await request.bodyData(context: context))
        let (app, created) = try await admin.putApp(tenant: tenant, bundleID: bundleID, teamID: body.teamID)
        return try JSONResponse.make(created ? .created : .ok, AppResponse(app))
    }

    /// Creates or renames one of the tenant's stores (as the tenant's POS key can).
    func putStore(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        let body = try WireCoding.decode(StorePutRequest.self, from: try await request.bodyData(context: context))
        let (saved, created) = try await admin.stores.put(
            id: try context.pathParameter("store"), body.definition, tenant: tenant)
        return try JSONResponse.make(created ? .created : .ok, StoreResponse(saved))
    }

    // MARK: - APNs keys

    func apnsKeys(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        let keys = try await admin.apnsKeys(tenant: tenant)
        return try JSONResponse.make(.ok, APNsKeyListResponse(keys: keys.map(APNsKeyResponse.init)))
    }

    func addAPNsKey(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        let principal = try context.authorizeAdmin(tenant: tenant)
        let bundleID = try context.pathParameter("bundle_id")
        let body = try WireCoding.decode(APNsKeyCreateRequest.self, from: try await request.bodyData(context: context))
        // A path reads a file on this server: a tenant's admin could name another tenant's key with it.
        if body.p8Path != nil, principal.tenant != nil { throw APIError.p8PathNotPermitted }
        return try await idempotent(request, context, principal: principal, tenant: tenant, body: body) {
            let (key, _) = try await admin.addAPNsKey(tenant: tenant, bundleID: bundleID, body.key)
            await apnsKeysChanged()
            context.logger.info(
                "APNs key added", metadata: ["bundle_id": "\(bundleID)", "key_id": "\(key.keyID)", "fingerprint": "\(key.fingerprint)"])
            let answer = try WireCoding.canonical(APNsKeyResponse(key))
            return (.created, answer, answer)
        }
    }

    func activateAPNsKey(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        let principal = try context.authorizeAdmin(tenant: tenant)
        let (bundleID, keyID) = (try context.pathParameter("bundle_id"), try context.pathParameter("key_id"))
        return try await idempotent(request, context, principal: principal, tenant: tenant, body: [String: String]()) {
            let key = try await admin.setAPNsKey(.active, tenant: tenant, bundleID: bundleID, keyID: keyID)
            await apnsKeysChanged()
            let answer = try WireCoding.canonical(APNsKeyResponse(key))
            return (.ok, answer, answer)
        }
    }

    func retireAPNsKey(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        _ = try context.authorizeAdmin(tenant: tenant)
        _ = try await admin.setAPNsKey(
            .retired, tenant: tenant, bundleID: try context.pathParameter("bundle_id"), keyID: try context.pathParameter("key_id"))
        await apnsKeysChanged()
        return Response(status: .noContent)
    }

    // MARK: - API keys

    func apiKeys(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try await existingTenant(context)
        let keys = try await admin.apiKeys(tenant: tenant)
        return try JSONResponse.make(.ok, APIKeyListResponse(keys: keys.map { APIKeyResponse($0) }))
    }

    func issueAPIKey(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        let principal = try context.authorizeAdmin(tenant: tenant)
        let body = try WireCoding.decode(APIKeyCreateRequest.self, from: try await request.bodyData(context: context))
        return try await idempotent(request, context, principal: principal, tenant: tenant, body: body) {
            let (key, presented) = try await admin.issueAPIKey(tenant: tenant, body.key)
            context.logger.info("API key issued", metadata: ["issued_key_id": "\(key.id)", "issued_role": "\(key.role.rawValue)"])
            return (.created, try WireCoding.canonical(APIKeyResponse(key, presented: presented)), try WireCoding.canonical(APIKeyResponse(key)))
        }
    }

    func rotateAPIKey(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        let principal = try context.authorizeAdmin(tenant: tenant)
        let id = try context.pathParameter("id")
        return try await idempotent(request, context, principal: principal, tenant: tenant, body: [String: String]()) {
            let (key, presented) = try await admin.rotateAPIKey(tenant: tenant, id: id)
            context.logger.info("API key rotated", metadata: ["issued_key_id": "\(key.id)", "rotated_from": "\(id)"])
            return (.created, try WireCoding.canonical(APIKeyResponse(key, presented: presented)), try WireCoding.canonical(APIKeyResponse(key)))
        }
    }

    func revokeAPIKey(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try Self.tenant(context)
        _ = try context.authorizeAdmin(tenant: tenant)
        let key = try await admin.revokeAPIKey(tenant: tenant, id: try context.pathParameter("id"))
        apiKeyCache.forget(key.id)
        context.logger.info("API key revoked", metadata: ["revoked_key_id": "\(key.id)"])
        return Response(status: .noContent)
    }

    // MARK: - Helpers

    static func tenant(_ context: CremaRequestContext) throws(APIError) -> String {
        let tenant = try context.pathParameter("tenant")
        guard TenantID.isValid(tenant) else {
            throw .invalidField(field: "tenant", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
        return tenant
    }

    /// The path's tenant, administered by the caller and existing.
    func existingTenant(_ context: CremaRequestContext) async throws -> String {
        let tenant = try Self.tenant(context)
        _ = try context.authorizeAdmin(tenant: tenant)
        guard try await admin.tenant(id: tenant) != nil else { throw APIError.unknownTenant(tenant) }
        return tenant
    }

    /// Runs an administrative POST once per Idempotency-Key (`IdempotentPOST`, through the service's `IdempotencyGate`).
    func idempotent(
        _ request: Request, _ context: CremaRequestContext, principal: APIPrincipal, tenant: String, body: some Encodable,
        _ perform: () async throws -> (status: HTTPResponse.Status, shown: String, kept: String)
    ) async throws -> Response {
        try await IdempotentPOST.run(
            request, logger: context.logger, gate: admin.idempotency, principal: principal, tenant: tenant, body: body, perform)
    }
}

// The administrative bodies as the service's commands, and its summary in the API's words.

extension CustomerTokenSettingsPutRequest {
    var change: CustomerTokenSettingsChange {
        CustomerTokenSettingsChange(
            issuer: issuer, audience: audience,
            keys: keys.map { CustomerTokenSettingsChange.Key(algorithm: $0.algorithm, secret: $0.secret, publicKey: $0.publicKey) })
    }
}

extension CustomerTokenSettingsResponse {
    init(_ summary: CustomerTokenSettingsSummary) {
        self.init(
            tenant: summary.tenant, issuer: summary.issuer, audience: summary.audience,
            keys: summary.keys.map { Key(algorithm: $0.algorithm, fingerprint: $0.fingerprint) }, updatedAt: summary.updatedAt)
    }
}

extension APNsKeyCreateRequest {
    var key: NewAPNsKey { NewAPNsKey(keyID: keyID, p8: p8, p8Path: p8Path, active: active) }
}

extension APIKeyCreateRequest {
    var key: NewAPIKey { NewAPIKey(role: role, stores: stores, expiresAt: expiresAt) }
}

// The records the administration services answer with, in the API's words, for the admin routes and `crema admin`.

extension TenantResponse {
    public init(_ tenant: TenantRecord) {
        self.init(id: tenant.id, name: tenant.name, defaultBundleID: tenant.defaultBundleID, createdAt: tenant.createdAt)
    }
}

extension AppResponse {
    public init(_ app: AppRecord) {
        self.init(tenant: app.tenant, bundleID: app.bundleID, teamID: app.teamID, createdAt: app.createdAt)
    }
}

extension APNsKeyResponse {
    public init(_ key: StoredAPNsKey) {
        let storage: String
        switch key.material {
        case .sealed: storage = "database"
        case .file: storage = "file"
        }
        self.init(
            bundleID: key.bundleID, keyID: key.keyID, teamID: key.teamID, storage: storage, fingerprint: key.fingerprint,
            state: key.state == .active && key.rejectedAt != nil ? "rejected" : key.state.rawValue, createdAt: key.createdAt,
            activatedAt: key.activatedAt, retiredAt: key.retiredAt, rejectedAt: key.rejectedAt, rejectedReason: key.rejectedReason)
    }
}

extension APIKeyResponse {
    /// A key as listed; `presented` only in the answer that issued it.
    public init(_ key: StoredAPIKey, presented: String? = nil) {
        self.init(
            id: key.id, tenant: key.tenant, role: key.role.rawValue, stores: key.stores, createdAt: key.createdAt,
            expiresAt: key.expiresAt, revokedAt: key.revokedAt, rotatedFrom: key.rotatedFrom, key: presented)
    }
}
