import ArgumentParser
import CremaAPI
import CremaCore
import CremaRuntime
import CremaServer
import CremaService
import CremaSettings
import CremaStore
import Foundation

/// `crema admin tenant <tenant> --name …`: create or rename a tenant.
struct AdminTenant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tenant", abstract: "Create or rename a tenant (a brand).")
    @Argument(help: "The tenant id: lowercase letters, digits and dashes.") var tenant: String
    @Option(help: "The tenant's display name.") var name: String

    func run() async throws {
        let (record, created) = try await Crema.Admin.withService { try await $0.putTenant(id: tenant, name: name) }
        say("\(created ? "Created" : "Updated") tenant \(record.id) (\(record.name))")
    }
}

/// `crema admin tenants`: list tenants.
struct AdminTenants: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tenants", abstract: "List the tenants.")

    func run() async throws {
        let tenants = try await Crema.Admin.withService { try await $0.database.tenants.tenants(only: nil) }
        for tenant in tenants { say("\(tenant.id)\t\(tenant.name)\tdefault app: \(tenant.defaultBundleID ?? "-")") }
    }
}

/// `crema admin app <tenant> <bundle-id> --team-id …`: create an app or change its team.
struct AdminApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Create an app (a bundle id) in a tenant, or change its Apple team.")
    @Argument(help: "The tenant id.") var tenant: String
    @Argument(help: "The app's bundle id (its APNs topic).") var bundleID: String
    @Option(name: .customLong("team-id"), help: "The 10-character Apple Team ID whose keys sign this app's pushes.") var teamID: String

    func run() async throws {
        let (app, created) = try await Crema.Admin.withService { try await $0.putApp(tenant: tenant, bundleID: bundleID, teamID: teamID) }
        say("\(created ? "Created" : "Updated") app \(app.bundleID) in \(app.tenant) (team \(app.teamID))")
    }
}

/// `crema admin store <tenant> <store> --name …`: create or rename one of a tenant's stores.
struct AdminStore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store", abstract: "Create or rename one of a tenant's stores.")
    @Argument(help: "The tenant id.") var tenant: String
    @Argument(help: "The store id: lowercase letters, digits and dashes.") var store: String
    @Option(help: "The store's display name.") var name: String
    @Option(help: "An IANA time zone (default UTC).") var timezone: String?

    func run() async throws {
        let (saved, created) = try await Crema.Admin.withService { admin in
            guard try await admin.database.tenants.tenant(id: tenant) != nil else { throw APIError.unknownTenant(tenant) }
            return try await StoreService(stores: admin.database.stores).put(id: store, StoreDefinition(name: name, timezone: timezone), tenant: tenant)
        }
        say("\(created ? "Created" : "Updated") store \(saved.id) (\(saved.name), \(saved.timezone)) in \(tenant)")
    }
}

/// `crema admin apns-key add|activate|retire …`.
struct AdminAPNsKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-key", abstract: "Add, activate or retire an app's APNs signing key.",
        discussion: """
            add: --p8 FILE seals the key's PEM in the database (needs CREMA_MASTER_KEY); --p8-path PATH keeps only the \
            path, read by each dispatcher. A new key signs at once unless --inactive. retire: never used again.
            """)
    @Argument(help: "add, activate or retire.") var action: Action
    @Argument(help: "The tenant id.") var tenant: String
    @Argument(help: "The app's bundle id.") var bundleID: String
    @Argument(help: "The 10-character Key ID Apple issued with the .p8.") var keyID: String
    @Option(help: "add: a .p8 file whose PEM is sealed in the database.") var p8: String?
    @Option(name: .customLong("p8-path"), help: "add: an absolute path to the .p8, kept as a path.") var p8Path: String?
    @Flag(help: "add: store the key without making it the signing key yet.") var inactive = false

    enum Action: String, ExpressibleByArgument, CaseIterable { case add, activate, retire }

    func run() async throws {
        let key: StoredAPNsKey = try await Crema.Admin.withService { admin in
            switch action {
            case .add:
                var pem: String?
                if let p8 {
                    do { pem = try String(contentsOfFile: p8, encoding: .utf8) } catch { throw StartupError(message: "cannot read \(p8): \(error.localizedDescription)") }
                }
                return try await admin.addAPNsKey(
                    tenant: tenant, bundleID: bundleID, NewAPNsKey(keyID: keyID, p8: pem, p8Path: p8Path, active: !inactive)).0
            case .activate: return try await admin.setAPNsKey(.active, tenant: tenant, bundleID: bundleID, keyID: keyID)
            case .retire: return try await admin.setAPNsKey(.retired, tenant: tenant, bundleID: bundleID, keyID: keyID)
            }
        }
        say(AdminAPNsKeys.line(APNsKeyResponse(key)))
    }
}

/// `crema admin apns-keys <tenant>`: list a tenant's APNs keys (fingerprints, never the keys).
struct AdminAPNsKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "apns-keys", abstract: "List a tenant's APNs keys.")
    @Argument(help: "The tenant id.") var tenant: String

    func run() async throws {
        let keys = try await Crema.Admin.withService { try await $0.database.apnsKeys.keys(tenant: tenant) }
        for key in keys { say(Self.line(APNsKeyResponse(key))) }
    }

    static func line(_ key: APNsKeyResponse) -> String {
        "\(key.bundleID)\t\(key.keyID)\tteam \(key.teamID)\t\(key.state)\t\(key.storage)\tfingerprint \(key.fingerprint)"
            + (key.rejectedReason.map { "\trejected: \($0)" } ?? "")
    }
}

/// `crema admin api-key issue|rotate|revoke …`.
struct AdminAPIKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-key", abstract: "Issue, rotate or revoke a tenant's API key (shown once, stored as a hash).",
        discussion: """
            issue <tenant> --role R [--store S ...] [--expires-at RFC3339]: a new key. rotate <tenant> <id>: a new key \
            with the same role and stores; the old one stays valid until revoked. revoke <tenant> <id>.
            """)
    @Argument(help: "issue, rotate or revoke.") var action: Action
    @Argument(help: "The tenant id.") var tenant: String
    @Argument(help: "rotate, revoke: the key's id (as listed).") var id: String?
    @Option(help: "issue: pos, barista, dashboard, app or admin.") var role: String?
    @Option(name: .customLong("store"), help: "issue: limit the key to this store (repeat for several).") var stores: [String] = []
    @Option(name: .customLong("expires-at"), help: "issue: when the key stops working (RFC 3339).") var expiresAt: String?

    enum Action: String, ExpressibleByArgument, CaseIterable { case issue, rotate, revoke }

    func run() async throws {
        switch action {
        case .issue:
            guard let role else { throw ValidationError("issue needs --role") }
            var expiry: Date?
            if let expiresAt {
                guard let date = WireCoding.parseRFC3339(expiresAt) else { throw ValidationError("--expires-at must be an RFC 3339 timestamp") }
                expiry = date
            }
            let request = NewAPIKey(role: role, stores: stores.isEmpty ? nil : stores, expiresAt: expiry)
            let (key, presented) = try await Crema.Admin.withService { try await $0.issueAPIKey(tenant: tenant, request) }
            Self.show(key, presented: presented)
        case .rotate:
            guard let id else { throw ValidationError("rotate needs the key's id") }
            let (key, presented) = try await Crema.Admin.withService { try await $0.rotateAPIKey(tenant: tenant, id: id) }
            Self.show(key, presented: presented)
            say("The old key \(id) stays valid until: crema admin api-key revoke \(tenant) \(id)")
        case .revoke:
            guard let id else { throw ValidationError("revoke needs the key's id") }
            let key = try await Crema.Admin.withService { try await $0.revokeAPIKey(tenant: tenant, id: id) }
            say("Revoked \(key.id) (\(key.role.rawValue) in \(key.tenant))")
        }
    }

    static func show(_ key: StoredAPIKey, presented: String) {
        say("Issued \(key.role.rawValue) key \(key.id) in \(key.tenant)\(key.stores.map { " for stores " + $0.joined(separator: ", ") } ?? ""):")
        say("  \(presented)")
        say("This is the only time the key is shown; Crema keeps a hash.")
    }
}

/// `crema admin api-keys <tenant>`: list a tenant's API keys (ids and roles, never the keys).
struct AdminAPIKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "api-keys", abstract: "List a tenant's API keys.")
    @Argument(help: "The tenant id.") var tenant: String

    func run() async throws {
        let keys = try await Crema.Admin.withService { try await $0.database.apiKeys.keys(tenant: tenant) }
        for key in keys {
            let state = key.revokedAt != nil ? "revoked" : (key.expiresAt.map { $0 <= Date() } ?? false) ? "expired" : "valid"
            say("\(key.id)\t\(key.role.rawValue)\t\(key.stores?.joined(separator: ",") ?? "all stores")\t\(state)"
                + (key.rotatedFrom.map { "\trotated from \($0)" } ?? ""))
        }
    }
}
