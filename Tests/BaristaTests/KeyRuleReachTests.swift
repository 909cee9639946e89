import CremaTestSupport
import Foundation
import Testing

/// Issue #16: the 16-character key rule applies where keys are used (`crema serve`), not to commands that
/// never read a key.
@Suite struct KeyRuleReachTests {
    @Test("crema migrate runs with short or malformed CREMA_API_KEYS, which it never uses",
          arguments: ["pos:k1,barista:k2", "nonsense"])
    func migrateIgnoresTheKeys(_ keys: String) async throws {
        try await TestDatabase.with(migrated: false) { database in
            let environment = [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                "CREMA_DATABASE_URL": database.conninfo, "CREMA_API_KEYS": keys,
            ]
            let migrated = try await Crema.run(Binaries.crema, ["migrate"], environment: environment)
            #expect(migrated.status == 0, "\(migrated)")
            let status = try await Crema.run(Binaries.crema, ["migrate", "--status"], environment: environment)
            #expect(status.status == 0 && status.stdout.contains("pending: none"), "\(status)")
        }
    }

    @Test("crema serve still refuses a key shorter than 16 characters, naming the rule and no key")
    func serveRefusesShortKeys() async throws {
        try await TestDatabase.with(migrated: false) { database in
            let environment = [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                "CREMA_DATABASE_URL": database.conninfo, "CREMA_API_KEYS": "pos:k1,barista:k2",
            ]
            let refused = try await Crema.run(Binaries.crema, ["serve", "--port", "0"], environment: environment)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("shorter than 16 characters"), "\(refused)")
            #expect(!refused.stderr.contains("k1"), "\(refused)")
        }
    }

    @Test("crema postgres answers with short CREMA_API_KEYS set: it never reads them")
    func postgresIgnoresTheKeys() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keys-reach-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "CREMA_API_KEYS": "pos:k1,barista:k2"]
        // No cluster in the folder: `status` exits 3 ("not running"), not with a complaint about keys.
        let status = try await Crema.run(Binaries.crema, ["postgres", "status", "--dir", folder.path], environment: environment)
        #expect(status.status == 3, "\(status)")
        #expect(!status.stderr.contains("CREMA_API_KEYS"), "\(status)")
    }
}
