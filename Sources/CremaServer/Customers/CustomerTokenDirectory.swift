public import CremaAPI
public import CremaClock
import CremaCore
public import CremaService
import CremaSettings
import Foundation
public import Logging
public import ServiceLifecycle
import JWTKit
import Synchronization

/// Each tenant's customer token verifier (docs/tenants.md): the default tenant's from `CREMA_CUSTOMER_JWT_*`, the
/// others' from the admin API's settings, reloaded every minute (`run`) and at once after this instance changes them.
/// A token is verified only with the keys of the tenant it names, and that verifier accepts only its own tenant,
/// so a token signed with tenant A's key never reaches tenant B's data.
///
/// A request never starts a reload, except the process's very first read: a token is unverified until it is checked,
/// and anyone can send a token naming any tenant. Reads are single-flight: callers that arrive during one wait for it.
public final class CustomerTokenDirectory: Service, CustomStringConvertible, Sendable {
    private struct State {
        var verifiers: [String: CustomerTokenVerifier] = [:]
        var loaded = false
        var reading: Task<Void, Never>?
    }

    /// How often `run` reads every tenant's settings again.
    public static let reloadInterval: Duration = .seconds(60)
    public var description: String { "CustomerTokenDirectory" }

    private let configured: CustomerTokenVerifier?
    private let settings: (any CustomerTokenSettingsSource)?
    private let masterKey: MasterKey?
    private let clock: CremaClock
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameters:
    ///   - configured: the default tenant's verifier from the environment; it wins over stored settings.
    ///   - settings: where other tenants' settings are; nil: only `configured`.
    ///   - now: the clock tokens are checked against (tests inject one).
    public init(
        configured: CustomerTokenVerifier?, settings: (any CustomerTokenSettingsSource)?, masterKey: MasterKey?, logger: Logger,
        clock: CremaClock
    ) {
        self.configured = configured
        self.settings = settings
        self.masterKey = masterKey
        self.logger = logger
        self.clock = clock
    }

    /// Verifies a token with the keys of the tenant its `tenant` claim names (absent: `default`).
    public func verify(_ token: String) async -> Result<CustomerIdentity, CustomerTokenRefusal> {
        guard let tenant = CustomerTokenVerifier.claimedTenant(token) else { return .failure(.malformed) }
        if tenant == TenantScope.defaultTenantName, let configured { return await configured.verify(token) }
        if !state.withLock({ $0.loaded }) { await reload() }
        guard let verifier = state.withLock({ $0.verifiers[tenant] }) else {
            return .failure(tenant == TenantScope.defaultTenantName ? .notConfigured : .unknownTenant)
        }
        return await verifier.verify(token)
    }

    /// Reads every tenant's settings now; a call during a read waits for that read instead of starting another.
    public func reload() async {
        guard let settings else { return }
        let reading = state.withLock { state -> Task<Void, Never> in
            if let reading = state.reading { return reading }
            let reading = Task { await self.read(settings) }
            state.reading = reading
            return reading
        }
        await reading.value
    }

    /// Reads every tenant's settings each `reloadInterval` until shutdown: the only reload not asked for by an admin.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.reload()
                try? await self.clock.sleep(for: Self.reloadInterval)
            }
        }
    }

    private func read(_ settings: any CustomerTokenSettingsSource) async {
        defer { state.withLock { $0.reading = nil } }
        do {
            var verifiers: [String: CustomerTokenVerifier] = [:]
            for stored in try await settings.all() {
                do {
                    verifiers[stored.tenant] = try await CustomerTokenVerifier(
                        try openSettings(stored), tenant: stored.tenant, leeway: CustomerTokenVerifier.defaultLeeway, clock: clock)
                } catch {
                    logger.error("a tenant's customer token keys cannot be used", metadata: ["tenant": "\(stored.tenant)", "error": "\(error)"])
                }
            }
            state.withLock { state in
                state.verifiers = verifiers
                state.loaded = true
            }
        } catch {
            logger.warning("could not read customer token settings", metadata: ["error": "\(error)"])
        }
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
