import CremaAPNsProtocol
import Crypto
public import Foundation

/// A webhook endpoint's signing secret: generated here, shown once, stored sealed under `CREMA_MASTER_KEY` and bound to
/// its endpoint, and used to sign every request (`Crema-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
/// `<t>.<raw body>`, keyed with the secret's UTF-8 bytes, docs/webhooks.md).
public enum WebhookSecret {
    /// `whsec_` and 64 hex digits (256 random bits).
    public static func generate() -> String {
        "whsec_" + [UInt8].random(count: 32).hexEncoded
    }

    /// What a sealed secret is bound to: moved to another endpoint's row, it does not open.
    public static func context(tenant: String, endpoint: UUID) -> String {
        "webhook:\(tenant):\(endpoint.uuidString.lowercased())"
    }

    public static func seal(_ secret: String, tenant: String, endpoint: UUID, masterKey: MasterKey) throws -> [UInt8] {
        try masterKey.seal(Data(secret.utf8), boundTo: context(tenant: tenant, endpoint: endpoint))
    }

    public static func open(_ sealed: [UInt8], tenant: String, endpoint: UUID, masterKey: MasterKey) throws(MasterKeyError) -> String {
        String(decoding: try masterKey.open(sealed, boundTo: context(tenant: tenant, endpoint: endpoint)), as: UTF8.self)
    }

    /// The `Crema-Signature` header value for `body` sent at `timestamp` (unix seconds).
    public static func signature(secret: String, timestamp: Int, body: some DataProtocol) -> String {
        var signed = Data("\(timestamp).".utf8)
        signed.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + mac.hexEncoded
    }

    /// What a receiver does (and the tests do, as a receiver would): the header is well formed, its `v1` matches, and
    /// its time is within `tolerance` seconds of `now`, so a captured request replayed later is refused.
    public static func verify(header: String, secret: String, body: some DataProtocol, now: Date, tolerance: Double = 300) -> Bool {
        var timestamp: Int?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { return false }
            if pair[0] == "t" { timestamp = Int(pair[1]) } else if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { return false }
        let expected = signature(secret: secret, timestamp: timestamp, body: body).split(separator: "=").last.map(String.init) ?? ""
        // Compared in constant time, as a receiver must.
        return signatures.contains { candidate in
            candidate.utf8.count == expected.utf8.count && zip(candidate.utf8, expected.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
