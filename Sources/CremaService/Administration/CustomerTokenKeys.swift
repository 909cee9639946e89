import CremaAPNsProtocol
import CremaClock
import Crypto
import CremaStore
import Foundation

/// A tenant's customer token keys, checked and sealed for storage, and opened again for verification.
public enum CustomerTokenKeys {
    /// What an HS256 secret is bound to when sealed: its tenant.
    static func context(tenant: String) -> String { "crema/customer-token-secret/\(tenant)" }

    /// Checks the request's keys and seals the HS256 secrets; throws `ServiceError`.
    static func stored(_ request: CustomerTokenSettingsChange, tenant: String, masterKey: MasterKey?) throws -> [StoredCustomerTokenSettings.Key] {
        guard (1...4).contains(request.keys.count) else {
            throw ServiceError.invalidField(field: "keys", reason: "must list 1–4 keys (two during a rotation)")
        }
        return try request.keys.enumerated().map { index, key in
            switch key.algorithm {
            case "hs256":
                guard let secret = key.secret, secret.utf8.count >= 32 else {
                    throw ServiceError.invalidField(field: "keys[\(index)].secret", reason: "must be at least 32 bytes (RFC 7518 requires 256 bits)")
                }
                guard let masterKey else { throw ServiceError.masterKeyNotConfigured }
                return .hs256(sealed: try masterKey.seal(Data(secret.utf8), boundTo: context(tenant: tenant)))
            case "es256":
                guard let pem = key.publicKey, (try? P256.Signing.PublicKey(pemRepresentation: pem)) != nil else {
                    throw ServiceError.invalidField(field: "keys[\(index)].public_key", reason: "must be a P-256 public key in PEM")
                }
                return .es256(publicKeyPEM: pem)
            default:
                throw ServiceError.invalidField(field: "keys[\(index)].algorithm", reason: "must be hs256 or es256")
            }
        }
    }

    /// An HS256 secret opened with the master key; throws `MasterKeyError`.
    public static func secret(_ sealed: [UInt8], tenant: String, masterKey: MasterKey?) throws -> [UInt8] {
        guard let masterKey else { throw MasterKeyError.cannotOpen }
        return Array(try masterKey.open(sealed, boundTo: context(tenant: tenant)))
    }

    /// The answer's view of a key: its algorithm and a fingerprint, never the secret.
    static func summary(_ key: StoredCustomerTokenSettings.Key, tenant: String, masterKey: MasterKey?) -> CustomerTokenSettingsSummary.Key {
        switch key {
        case .hs256(let sealed):
            let secret = (try? secret(sealed, tenant: tenant, masterKey: masterKey)) ?? sealed
            return .init(algorithm: "hs256", fingerprint: fingerprint(secret))
        case .es256(let pem):
            let der = (try? P256.Signing.PublicKey(pemRepresentation: pem))?.derRepresentation ?? Data(pem.utf8)
            return .init(algorithm: "es256", fingerprint: fingerprint(Array(der)))
        }
    }

    static func fingerprint(_ bytes: some DataProtocol) -> String {
        SHA256.hash(data: Data(bytes)).prefix(8).hexEncoded
    }
}

extension AdminService {
    /// Replaces how a tenant's customer tokens are verified.
    public func putCustomerTokenSettings(
        tenant: String, _ request: CustomerTokenSettingsChange
    ) async throws -> CustomerTokenSettingsSummary {
        try Self.checkTenant(tenant)
        for (field, value) in [("issuer", request.issuer), ("audience", request.audience)] {
            guard (1...500).contains(value.count), !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw ServiceError.invalidField(field: field, reason: "must be 1–500 characters without control characters")
            }
        }
        let keys = try CustomerTokenKeys.stored(request, tenant: tenant, masterKey: masterKey)
        let saved = try await database.customerTokenSettings.put(
            StoredCustomerTokenSettings(tenant: tenant, issuer: request.issuer, audience: request.audience, keys: keys, updatedAt: clock.now))
        return summary(saved)
    }

    /// A tenant's settings as they may be shown, or nil when it has none.
    public func customerTokenSettings(tenant: String) async throws -> CustomerTokenSettingsSummary? {
        try await database.customerTokenSettings.all().first { $0.tenant == tenant }.map(summary)
    }

    func summary(_ settings: StoredCustomerTokenSettings) -> CustomerTokenSettingsSummary {
        CustomerTokenSettingsSummary(
            tenant: settings.tenant, issuer: settings.issuer, audience: settings.audience,
            keys: settings.keys.map { CustomerTokenKeys.summary($0, tenant: settings.tenant, masterKey: masterKey) }, updatedAt: settings.updatedAt)
    }
}
