public import CremaAPI
import CremaCore
public import CremaService
public import CremaStore
public import Foundation
public import Logging
import JWTKit
import Synchronization

/// Each tenant's customer token verifier (docs/tenants.md): the default tenant's from `CREMA_CUSTOMER_JWT_*`, the
/// others' from the admin API's settings, reloaded every minute and at once after this instance changes them. A
/// token is verified only with the keys of the tenant it names, and that verifier accepts only its own tenant,
/// so a token signed with tenant A's key never reaches tenant B's data.
public final class CustomerTokenDirectory: Sendable {
    private struct State {
        var verifiers: [String: CustomerTokenVerifier] = [:]
        var loadedAt: Date?
    }

    private let configured: CustomerTokenVerifier?
    private let settings: CustomerTokenSettingsRepository?
    private let masterKey: MasterKey?
    private let now: @Sendable () -> Date
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameters:
    ///   - configured: the default tenant's verifier from the environment; it wins over stored settings.
    ///   - settings: where other tenants' settings are; nil: only `configured`.
    ///   - now: the clock tokens are checked against (tests inject one).
    public init(
        configured: CustomerTokenVerifier?, settings: CustomerTokenSettingsRepository?, masterKey: MasterKey?, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configured = configured
        self.settings = settings
        self.masterKey = masterKey
        self.logger = logger
        self.now = now
    }

    /// Verifies a token with the keys of the tenant its `tenant` claim names (absent: `default`).
    public func verify(_ token: String) async -> Result<CustomerIdentity, CustomerTokenRefusal> {
        guard let tenant = CustomerTokenVerifier.claimedTenant(token) else { return .failure(.malformed) }
        if tenant == TenantScope.defaultTenantName, let configured { return await configured.verify(token) }
        await reloadIfDue()
        guard let verifier = state.withLock({ $0.verifiers[tenant] }) else {
            return .failure(tenant == TenantScope.defaultTenantName ? .notConfigured : .unknownTenant)
        }
        return await verifier.verify(token)
    }

    /// Reads every tenant's settings now.
    public func reload() async {
        guard let settings else { return }
        do {
            var verifiers: [String: CustomerTokenVerifier] = [:]
            for stored in try await settings.all() {
                do {
                    verifiers[stored.tenant] = try await CustomerTokenVerifier(
                        try openSettings(stored), tenant: stored.tenant, leeway: CustomerTokenVerifier.defaultLeeway, now: now)
                } catch {
                    logger.error("a tenant's customer token keys cannot be used", metadata: ["tenant": "\(stored.tenant)", "error": "\(error)"])
                }
            }
            let at = now()
            state.withLock { state in
                state.verifiers = verifiers
                state.loadedAt = at
            }
        } catch {
            logger.warning("could not read customer token settings", metadata: ["error": "\(error)"])
        }
    }

    private func reloadIfDue() async {
        let due = state.withLock { state in state.loadedAt.map { now().timeIntervalSince($0) >= 60 } ?? true }
        if due { await reload() }
    }

    private func openSettings(_ stored: StoredCustomerTokenSettings) throws -> CustomerTokenSettings {
        let keys = try stored.keys.map { key -> CustomerTokenSettings.Key in
            switch key {
            case .hs256(let sealed): .hs256(secret: try CustomerTokenKeys.secret(sealed, tenant: stored.tenant, masterKey: masterKey))
            case .es256(let pem): .es256(pem: pem)
            }
        }
        return CustomerTokenSettings(keys: keys, issuer: stored.issuer, audience: stored.audience)
    }
}
