import CremaService
import CremaSettings
import Foundation
import Testing

/// The secrets tenants bring: the master key that seals `.p8` keys, and the API keys Crema generates.
@Suite struct SecretsTests {
    static let master = Data((0..<32).map { UInt8($0) }).base64EncodedString()

    @Test("A sealed value opens with the same master key and context only")
    func sealedValuesAreBoundToTheirKeyAndRow() throws {
        let key = try MasterKey(base64: Self.master)
        let sealed = try key.seal(Data("-----BEGIN PRIVATE KEY-----".utf8), boundTo: "crema/apns-key/harbor/com.harbor/KEY1")
        #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE"))
        #expect(try key.open(sealed, boundTo: "crema/apns-key/harbor/com.harbor/KEY1") == Data("-----BEGIN PRIVATE KEY-----".utf8))
        #expect(throws: MasterKeyError.cannotOpen) { try key.open(sealed, boundTo: "crema/apns-key/other/com.harbor/KEY1") }
        let other = try MasterKey(base64: Data(repeating: 9, count: 32).base64EncodedString())
        #expect(throws: MasterKeyError.cannotOpen) { try other.open(sealed, boundTo: "crema/apns-key/harbor/com.harbor/KEY1") }
        var tampered = sealed
        tampered[tampered.count / 2] ^= 1
        #expect(throws: MasterKeyError.cannotOpen) { try key.open(tampered, boundTo: "crema/apns-key/harbor/com.harbor/KEY1") }
        #expect("\(key)" == "MasterKey(redacted)")
    }

    @Test("A master key that is not base64 of 32 bytes stops the start with exit-78 configuration errors")
    func badMasterKeysAreConfigurationErrors() {
        #expect(throws: MasterKeyError.notBase64) { try MasterKey(base64: "not base64!") }
        #expect(throws: MasterKeyError.wrongLength(16)) { try MasterKey(base64: Data(count: 16).base64EncodedString()) }
        #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: ["CREMA_MASTER_KEY": "short"]) }
        #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: ["CREMA_ADMIN_KEY": "too-short"]) }
        let configured = try? CremaConfiguration(environment: ["CREMA_MASTER_KEY": Self.master, "CREMA_ADMIN_KEY": "admin-0123456789abcdef"])
        #expect(configured?.masterKey != nil)
        #expect(configured?.apiKeys.principal(for: "admin-0123456789abcdef")?.tenant == nil)
    }

    @Test("A generated API key carries its public id, and only its hash is needed to check it")
    func generatedKeysHaveAPublicIDAndAHash() {
        let secret = APIKeySecret.generate()
        #expect(secret.presented.hasPrefix("crema_" + secret.id + "_") && secret.presented.count == 6 + 16 + 1 + 43)
        #expect(APIKeySecret.id(of: Substring(secret.presented)) == secret.id)
        #expect(APIKeySecret.id(of: "crema_short") == nil && APIKeySecret.id(of: "pos-key-0123456789") == nil)
        let hash = APIKeySecret.hash(secret.presented)
        #expect(hash.count == 32 && APIKeySecret.matches(hash, APIKeySecret.hash(secret.presented)))
        #expect(!APIKeySecret.matches(hash, APIKeySecret.hash(APIKeySecret.generate().presented)))
        #expect(APIKeySecret.generate().id != secret.id)
    }
}
