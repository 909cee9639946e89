public import CremaStore

/// Where every tenant's customer token settings are read from: the store, for the process's verifiers
/// (`CustomerTokenDirectory` in CremaServer), named here so the HTTP side reads them without the store's repository.
public protocol CustomerTokenSettingsSource: Sendable {
    /// Every tenant's settings, their HS256 secrets still sealed.
    func all() async throws(StoreError) -> [StoredCustomerTokenSettings]
}

extension CustomerTokenSettingsRepository: CustomerTokenSettingsSource {}
