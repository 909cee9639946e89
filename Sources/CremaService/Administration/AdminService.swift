import CremaAPNsKey
public import CremaClock
import CremaCore
public import CremaStore
import Foundation

/// Tenants, apps, APNs keys and API keys (docs/tenants.md): what the admin routes and `crema admin` both call, so
/// the HTTP API and the command line validate, seal and hash the same way.
public struct AdminService: Sendable {
    public let database: CremaDatabase
    /// Seals `.p8` keys stored in the database; nil: only keys given as file paths can be added.
    public let masterKey: MasterKey?
    /// Runs the administrative POSTs once per Idempotency-Key.
    public let idempotency: IdempotencyGate
    let clock: CremaClock

    /// - Parameter idempotency: nil: a gate on `database` that waits on the real clock.
    public init(
        database: CremaDatabase, masterKey: MasterKey?, idempotency: IdempotencyGate? = nil, clock: CremaClock
    ) {
        self.database = database
        self.masterKey = masterKey
        self.idempotency = idempotency ?? IdempotencyGate(repository: database.idempotency, clock: clock)
        self.clock = clock
    }

    // MARK: - Tenants and apps

    public func putTenant(id: String, name: String) async throws -> (TenantRecord, created: Bool) {
        try Self.checkTenant(id)
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, name.unicodeScalars.count <= 120,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw ServiceError.invalidField(field: "name", reason: "must be 1–120 characters without control characters") }
        return try await database.tenants.put(id: id, name: trimmed)
    }

    public func putApp(tenant: String, bundleID: String, teamID: String) async throws -> (AppRecord, created: Bool) {
        try Self.checkTenant(tenant)
        try Self.checkBundleID(bundleID)
        try Self.checkAppleID(teamID, field: "team_id")
        return try await database.tenants.putApp(tenant: tenant, bundleID: bundleID, teamID: teamID)
    }

    // MARK: - APNs keys

    /// Adds a `.p8` to an app, checked by parsing it as APNs will use it: PEM text is sealed under the master key,
    /// a path is read now (and again by each dispatcher when it loads the key).
    public func addAPNsKey(tenant: String, bundleID: String, _ request: NewAPNsKey) async throws -> (StoredAPNsKey, created: Bool) {
        try Self.checkTenant(tenant)
        try Self.checkBundleID(bundleID)
        try Self.checkAppleID(request.keyID, field: "key_id")
        guard let app = try await database.tenants.apps(tenant: tenant).first(where: { $0.bundleID == bundleID }) else {
            throw ServiceError.unknownApp(bundleID)
        }
        let key: APNsSigningKey
        let material: StoredAPNsKey.Material
        switch (request.p8, request.p8Path) {
        case (let pem?, nil):
            // The key is checked first: a malformed .p8 is worth saying even where no master key is set.
            key = try Self.parse { () throws(APNsSigningKeyError) in try APNsSigningKey(pem: pem, keyID: request.keyID, teamID: app.teamID) }
            guard let masterKey else { throw ServiceError.masterKeyNotConfigured }
            let context = APNsKeyMaterial.context(tenant: tenant, bundleID: bundleID, keyID: request.keyID)
            material = .sealed(try masterKey.seal(Data(pem.utf8), boundTo: context))
        case (nil, let path?):
            guard path.hasPrefix("/") else { throw ServiceError.invalidField(field: "p8_path", reason: "must be an absolute path") }
            key = try Self.parse { () throws(APNsSigningKeyError) in
                try APNsSigningKey(contentsOf: path, keyID: request.keyID, teamID: app.teamID)
            }
            material = .file(path)
        default:
            throw ServiceError.invalidField(field: "p8", reason: "give exactly one of p8 (the PEM text) and p8_path")
        }
        return try await database.apnsKeys.add(
            tenant: tenant, bundleID: bundleID, keyID: request.keyID, material: material, fingerprint: key.fingerprint,
            active: request.active ?? true)
    }

    /// Activates a key (clearing a rejection) or retires it.
    public func setAPNsKey(
        _ state: StoredAPNsKey.State, tenant: String, bundleID: String, keyID: String
    ) async throws -> StoredAPNsKey {
        guard let key = try await database.apnsKeys.setState(state, tenant: tenant, bundleID: bundleID, keyID: keyID) else {
            throw ServiceError.unknownAPNsKey(keyID)
        }
        return key
    }

    // MARK: - API keys

    /// Issues a key: the answer is the only time the whole key exists outside the caller.
    public func issueAPIKey(
        tenant: String, _ request: NewAPIKey, rotatedFrom: String? = nil
    ) async throws -> (StoredAPIKey, presented: String) {
        try Self.checkTenant(tenant)
        guard let role = Role(rawValue: request.role), Role.keyRoles.contains(role) else {
            throw ServiceError.invalidField(field: "role", reason: "must be one of \(Role.keyRoles.map(\.rawValue).joined(separator: ", "))")
        }
        if let stores = request.stores {
            guard !stores.isEmpty, stores.count <= 1000, stores.allSatisfy(StoreID.isValid) else {
                throw ServiceError.invalidField(field: "stores", reason: "must list 1–1000 store ids (lowercase letters, digits, dashes)")
            }
            guard role != .admin else { throw ServiceError.invalidField(field: "stores", reason: "an admin key administers the whole tenant") }
        }
        if let expiry = request.expiresAt, expiry <= clock.now {
            throw ServiceError.invalidField(field: "expires_at", reason: "must be in the future")
        }
        let secret = APIKeySecret.generate()
        let stored = StoredAPIKey(
            id: secret.id, tenant: tenant, role: role, stores: request.stores.map { Array(Set($0)).sorted() },
            hash: APIKeySecret.hash(secret.presented), createdAt: clock.now, expiresAt: request.expiresAt, revokedAt: nil,
            rotatedFrom: rotatedFrom)
        try await database.apiKeys.insert(stored)
        return (stored, secret.presented)
    }

    /// A new key with the old one's role, stores and expiry; both stay valid until the old one is revoked.
    public func rotateAPIKey(tenant: String, id: String) async throws -> (StoredAPIKey, presented: String) {
        guard let old = try await database.apiKeys.keys(tenant: tenant).first(where: { $0.id == id }) else {
            throw ServiceError.unknownAPIKey(id)
        }
        guard old.revokedAt == nil else { throw ServiceError.apiKeyRevoked }
        if let expiry = old.expiresAt, expiry <= clock.now {
            throw ServiceError.invalidField(field: "id", reason: "names an expired key; issue a new key instead")
        }
        return try await issueAPIKey(
            tenant: tenant, NewAPIKey(role: old.role.rawValue, stores: old.stores, expiresAt: old.expiresAt), rotatedFrom: old.id)
    }

    public func revokeAPIKey(tenant: String, id: String) async throws -> StoredAPIKey {
        guard let key = try await database.apiKeys.revoke(id: id, tenant: tenant) else { throw ServiceError.unknownAPIKey(id) }
        return key
    }

    // MARK: - Checks

    static func checkTenant(_ id: String) throws(ServiceError) {
        guard TenantID.isValid(id) else {
            throw .invalidField(field: "tenant", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
    }

    static func checkBundleID(_ id: String) throws(ServiceError) {
        let allowed = id.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x2D
        }
        guard allowed, (1...155).contains(id.utf8.count), id.first != ".", id.first != "-" else {
            throw .invalidField(field: "bundle_id", reason: "must be a bundle id: letters, digits, dots and dashes, at most 155")
        }
    }

    /// Apple's Team IDs and Key IDs: ten uppercase letters or digits.
    static func checkAppleID(_ id: String, field: String) throws(ServiceError) {
        guard id.utf8.count == 10, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else {
            throw .invalidField(field: field, reason: "must be 10 uppercase letters or digits, as Apple issues them")
        }
    }

    private static func parse(_ body: () throws(APNsSigningKeyError) -> APNsSigningKey) throws(ServiceError) -> APNsSigningKey {
        do throws(APNsSigningKeyError) {
            return try body()
        } catch {
            throw .invalidAPNsKey("\(error)")
        }
    }
}
