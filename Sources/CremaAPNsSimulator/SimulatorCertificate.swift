import Crypto
public import Foundation
import SwiftASN1
import X509

/// The simulator's self-signed TLS identity (P-256, SAN `localhost` and `127.0.0.1`), kept as `ca.pem` and
/// `key.pem` in one folder so clients can trust it with `CREMA_APNS_CA_FILE` across restarts.
public struct SimulatorCertificate: Sendable {
    public var certificatePEM: String
    public var privateKeyPEM: String
    public var caFile: String

    /// Reuses the folder's certificate when it is readable, matches its key and stays valid for at least a
    /// day; otherwise writes a new one (valid for a year).
    public static func loadOrCreate(directory: String, now: Date) throws(APNsSimulatorError) -> SimulatorCertificate {
        let folder = URL(fileURLWithPath: directory)
        let caFile = folder.appendingPathComponent("ca.pem").path
        let keyFile = folder.appendingPathComponent("key.pem").path
        if let existing = reuse(caFile: caFile, keyFile: keyFile, now: now) {
            return existing
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .certificateDirectory(path: directory, reason: error.localizedDescription)
        }
        let created: SimulatorCertificate
        do {
            created = try generate(caFile: caFile, now: now)
        } catch {
            throw .certificate(reason: "cannot generate a certificate: \(error)")
        }
        do {
            _ = FileManager.default.createFile(atPath: keyFile, contents: nil, attributes: [.posixPermissions: 0o600])
            try Data(created.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: keyFile))
            try Data(created.certificatePEM.utf8).write(to: URL(fileURLWithPath: caFile), options: .atomic)
        } catch {
            throw .certificateDirectory(path: directory, reason: error.localizedDescription)
        }
        return created
    }

    private static func reuse(caFile: String, keyFile: String, now: Date) -> SimulatorCertificate? {
        guard let certificatePEM = try? String(contentsOfFile: caFile, encoding: .utf8),
            let privateKeyPEM = try? String(contentsOfFile: keyFile, encoding: .utf8),
            let certificate = try? Certificate(pemEncoded: certificatePEM),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM),
            certificate.publicKey == Certificate.PublicKey(key.publicKey),
            certificate.notValidAfter > now.addingTimeInterval(24 * 3600),
            certificate.notValidBefore <= now
        else { return nil }
        return SimulatorCertificate(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM, caFile: caFile)
    }

    private static func generate(caFile: String, now: Date) throws -> SimulatorCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("Crema")
            CommonName("Crema APNs simulator")
        }
        // One certificate is both the trust root clients load and the server's own: a CA that names the
        // loopback host and address, so hostname checks pass for https://localhost and https://127.0.0.1.
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(365 * 24 * 3600),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
        return SimulatorCertificate(
            certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyPEM: key.pemRepresentation,
            caFile: caFile)
    }
}
