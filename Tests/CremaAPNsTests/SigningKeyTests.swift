import CremaAPNsKey
import Foundation
import Testing

@testable import CremaAPNs

@Suite("Signing keys")
struct SigningKeyTests {
    @Test("The fingerprint is 16 hex characters of the public key, the same after a PEM round trip")
    func fingerprintNamesThePublicKey() throws {
        let key = APNsSigningKey.generate(keyID: "KEY1234567", teamID: "TEAM123456")
        #expect(key.fingerprint.count == 16)
        #expect(key.fingerprint.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        let again = try APNsSigningKey(pem: key.pkcs8PEM, keyID: "KEY7654321", teamID: "TEAM654321")
        #expect(again.fingerprint == key.fingerprint)
        #expect(APNsSigningKey.generate(keyID: "KEY1234567", teamID: "TEAM123456").fingerprint != key.fingerprint)
        #expect(!key.pkcs8PEM.contains(key.fingerprint))
    }

    @Test("A malformed PEM, an unreadable file and a bad identifier each fail with their own stable code")
    func errorsHaveStableCodes() throws {
        let key = APNsSigningKey.generate(keyID: "KEY1234567", teamID: "TEAM123456")
        let broken = String(key.pkcs8PEM.dropLast(40))
        let invalid = #expect(throws: APNsSigningKeyError.self) {
            try APNsSigningKey(pem: broken, keyID: "KEY1234567", teamID: "TEAM123456")
        }
        #expect(invalid?.code == "apns_key_invalid")
        let unreadable = #expect(throws: APNsSigningKeyError.self) {
            try APNsSigningKey(contentsOf: "/nonexistent/AuthKey.p8", keyID: "KEY1234567", teamID: "TEAM123456")
        }
        #expect(unreadable?.code == "apns_key_unreadable")
        let identifier = #expect(throws: APNsSigningKeyError.self) {
            try APNsSigningKey(pem: key.pkcs8PEM, keyID: "KEY 123", teamID: "TEAM123456")
        }
        #expect(identifier?.code == "apns_key_identifier_invalid")
        #expect(identifier?.description.hasPrefix("apns_key_identifier_invalid: ") == true)
    }
}
