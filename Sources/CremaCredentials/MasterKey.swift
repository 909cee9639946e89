import Crypto
public import Foundation

/// `CREMA_MASTER_KEY`: seals secrets (APNs `.p8` keys) before they reach the database, so a copy of the database
/// alone reveals none. Each sealed value is bound to the row it belongs to (the associated data), so it cannot be
/// moved to another row. The key itself is never stored, printed or logged.
public struct MasterKey: Sendable, CustomStringConvertible {
    private let key: SymmetricKey

    /// Reads base64 of exactly 32 bytes (`openssl rand -base64 32`).
    public init(base64: String) throws(MasterKeyError) {
        guard let bytes = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw .notBase64 }
        guard bytes.count == 32 else { throw .wrongLength(bytes.count) }
        key = SymmetricKey(data: bytes)
    }

    /// AES-256-GCM: a random nonce, the ciphertext and the tag, in one byte string.
    public func seal(_ plaintext: some DataProtocol, boundTo context: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw MasterKeyError.cannotOpen }
        return Array(combined)
    }

    /// Opens what `seal` produced for the same context; throws `cannotOpen` for another key, another context or
    /// altered bytes.
    public func open(_ sealed: [UInt8], boundTo context: String) throws(MasterKeyError) -> Data {
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(context.utf8))
        } catch {
            throw .cannotOpen
        }
    }

    /// A key of its own for `purpose`, derived with HKDF-SHA256, so no two uses of the master key share a key.
    func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(purpose.utf8), outputByteCount: 32)
    }

    public var description: String { "MasterKey(redacted)" }
}

/// Why the master key or a value sealed with it cannot be used; the message never echoes key material.
public enum MasterKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case notBase64
    case wrongLength(Int)
    /// Another master key sealed it, or the bytes were changed.
    case cannotOpen

    public var code: String {
        switch self {
        case .notBase64, .wrongLength: "invalid_master_key"
        case .cannotOpen: "sealed_key_unreadable"
        }
    }

    public var description: String {
        switch self {
        case .notBase64: "CREMA_MASTER_KEY is not base64 (expected base64 of 32 random bytes: openssl rand -base64 32)"
        case .wrongLength(let count): "CREMA_MASTER_KEY decodes to \(count) bytes, not 32 (openssl rand -base64 32)"
        case .cannotOpen: "a sealed key cannot be opened with this CREMA_MASTER_KEY"
        }
    }
}
