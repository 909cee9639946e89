public import CremaAPNsKey
public import CremaClock
public import CremaCore
public import CremaService
public import CremaStore
public import Foundation
public import Logging
import Synchronization

/// Which key signs each app's pushes on this instance (docs/tenants.md): the database's active keys, reloaded every
/// minute and at once when this instance's admin routes change one, and the key configured by `CREMA_APNS_*` for the
/// default tenant's app. Apps are keyed by tenant and bundle id: two tenants may register the same bundle id, and
/// each one's pushes are signed with its own key. An app with no key here is not claimed by this instance: its rows
/// wait for one that can sign them, never go out signed by another app's (or another tenant's) key.
public final class SigningKeyring: Sendable {
    private struct State {
        var database: [TenantApp: APNsSigningKey] = [:]
        var loadedAt: Date?
        /// Apps whose stored key could not be opened (missing master key, unreadable file): said once per change.
        var unusable: [TenantApp: String] = [:]
        /// Fingerprints of keys from the environment APNs refused: the database marks its own keys, these are
        /// marked here until the process restarts with another key.
        var rejected: Set<String> = []
        /// Reloads are numbered when they start; a snapshot older than the one in force (or than a refusal) is
        /// dropped, so a slow reload can never bring back a key retired or refused meanwhile.
        var started = 0
        var applied = 0
    }

    private let repository: APNsKeyRepository?
    private let masterKey: MasterKey?
    /// The configured key's app, in the default tenant.
    private let configured: [TenantApp: APNsSigningKey]
    private let fallback: APNsSigningKey?
    private let logger: Logger
    private let clock: CremaClock
    private let onLoad: (@Sendable (APNsSigningKey) -> Void)?
    private let state = Mutex(State())
    /// How often the database's keys are read again.
    public static let reloadInterval: TimeInterval = 60

    /// - Parameters:
    ///   - repository: where apps' keys are stored; nil uses only `configured` and `fallback`.
    ///   - configured: bundle id → key from the environment (the default tenant's single app).
    ///   - fallback: signs every app that has no key of its own: only the built-in simulator's generated key, with
    ///     the private embedded database, where nothing can reach Apple by mistake.
    ///   - onLoad: told of each key loaded from the database (the built-in simulator trusts it, as Apple would).
    public init(
        repository: APNsKeyRepository?, masterKey: MasterKey?, configured: [String: APNsSigningKey] = [:], fallback: APNsSigningKey? = nil,
        logger: Logger, clock: CremaClock, onLoad: (@Sendable (APNsSigningKey) -> Void)? = nil
    ) {
        self.onLoad = onLoad
        self.repository = repository
        self.masterKey = masterKey
        self.configured = Dictionary(
            configured.map { (TenantApp(tenant: TenantScope.defaultTenantName, bundleID: $0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.fallback = fallback
        self.logger = logger
        self.clock = clock
    }

    /// The key that signs `tenant`'s pushes for `bundleID` here, or nil: then the row is not this instance's to send.
    /// A stored key signs for its own tenant only, the configured key for the default tenant only.
    public func key(for bundleID: String?, tenant: String) -> APNsSigningKey? {
        let app = bundleID.map { TenantApp(tenant: tenant, bundleID: $0) }
        let (stored, rejected) = state.withLock { state in (app.flatMap { state.database[$0] }, state.rejected) }
        if let stored { return stored }
        let usable = { (key: APNsSigningKey?) in key.flatMap { rejected.contains($0.fingerprint) ? nil : $0 } }
        return usable(app.flatMap { configured[$0] }) ?? usable(fallback)
    }

    /// The apps (tenant and bundle id) this instance can sign for, as the claim's filter; nil when the fallback signs
    /// everything.
    public var apps: Set<TenantApp>? {
        state.withLock { state in
            if let fallback, !state.rejected.contains(fallback.fingerprint) { return nil }
            return Set(state.database.keys).union(configured.filter { !state.rejected.contains($0.value.fingerprint) }.keys)
        }
    }

    /// APNs refused `key`: stop using it here at once. A key from the database is dropped now and marked there (by
    /// the dispatcher), so the next reload leaves it out; one from the environment stays refused until restart.
    /// Reloads already under way are dropped, as they may have read the key before it was marked.
    public func refuse(_ key: APNsSigningKey) {
        state.withLock { state in
            let stored = state.database.filter { $0.value.fingerprint == key.fingerprint }.map(\.key)
            for app in stored { state.database.removeValue(forKey: app) }
            if fallback?.fingerprint == key.fingerprint || configured.values.contains(where: { $0.fingerprint == key.fingerprint }) {
                state.rejected.insert(key.fingerprint)
            }
            state.applied = state.started
        }
    }

    /// Reads the database's signing keys now.
    public func reload() async throws {
        guard let repository else { return }
        let generation = state.withLock { state in
            state.started += 1
            return state.started
        }
        let stored = try await repository.signingKeys()
        var loaded: [TenantApp: APNsSigningKey] = [:]
        var unusable: [TenantApp: String] = [:]
        for key in stored {
            let app = TenantApp(tenant: key.tenant, bundleID: key.bundleID)
            do {
                loaded[app] = try APNsKeyMaterial.signingKey(key, masterKey: masterKey)
            } catch {
                unusable[app] = "key \(key.keyID): \(error)"
            }
        }
        let at = clock.now
        let (added, newlyUnusable) = state.withLock { state -> ([TenantApp], [TenantApp: String]) in
            guard generation > state.applied else { return ([], [:]) }
            state.applied = generation
            let added = loaded.filter { state.database[$0.key]?.fingerprint != $0.value.fingerprint }.map(\.key)
            let newlyUnusable = unusable.filter { state.unusable[$0.key] != $0.value }
            state.database = loaded
            state.unusable = unusable
            state.loadedAt = at
            return (added, newlyUnusable)
        }
        for app in added.sorted() {
            let key = loaded[app]!
            onLoad?(key)
            logger.info(
                "APNs signing key loaded",
                metadata: ["tenant": "\(app.tenant)", "bundle_id": "\(app.bundleID)", "key_id": "\(key.keyID)", "fingerprint": "\(key.fingerprint)"])
        }
        for (app, reason) in newlyUnusable.sorted(by: { $0.key < $1.key }) {
            logger.error(
                "APNs signing key cannot be used; this app's pushes wait",
                metadata: ["tenant": "\(app.tenant)", "bundle_id": "\(app.bundleID)", "reason": "\(reason)"])
        }
    }

    /// Reloads when the last load is `reloadInterval` old (or there was none); the dispatcher calls it every tick.
    public func reloadIfDue() async throws {
        let due = state.withLock { state in state.loadedAt.map { clock.now.timeIntervalSince($0) >= Self.reloadInterval } ?? true }
        if due { try await reload() }
    }
}
