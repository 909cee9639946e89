import CremaTestSupport
import Foundation
import Testing

/// `crema admin` as the real binary: its refusals name its own flags, and on the embedded cluster it seals with the
/// master key `serve` keeps in the data folder.
@Suite(.timeLimit(.minutes(3))) struct CremaAdminTests {
    /// A throwaway P-256 key made for this test only; it signs nothing anywhere.
    static let pem = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrAKFK7XNtF4Ufa2y
        J4TPxhi/HkRiJksJhdxWSVLAsgKhRANCAAQRKQIME5du1v4mZrLhM9raFnqKNBSL
        UcKoF/2wU+ubAs5dK/fcLyjfkGFhoBvEbafoqakYmgaTCj1PWQ80qu0g
        -----END PRIVATE KEY-----

        """

    func admin(_ arguments: [String], _ environment: [String: String]) async throws -> BaristaRun {
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        for (name, value) in environment { base[name] = value }
        return try await Crema.run(Binaries.crema, ["admin"] + arguments, environment: base)
    }

    /// A fresh folder holding the test key as `AuthKey.p8`.
    func folderWithKey() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crema-admin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.pem.utf8).write(to: folder.appendingPathComponent("AuthKey.p8"))
        return folder
    }

    @Test("storing AP 8 without a master key names the flags to use not the APIs fields") func storingAP8WithoutAMasterKeyNamesTheFlagsToUseNotTheAPIsFields() async throws {
        let folder = try folderWithKey()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await TestDatabase.with { db in
            let environment = ["CREMA_DATABASE_URL": db.conninfo]
            let app = try await admin(["app", "default", "com.example.flags", "--team-id", "TEAM123456"], environment)
            #expect(app.status == 0, "\(app)")
            let sealed = try await admin(
                ["apns-key", "add", "default", "com.example.flags", "KEYID12345", "--p8", folder.appendingPathComponent("AuthKey.p8").path], environment)
            #expect(sealed.status != 0, "\(sealed)")
            #expect(sealed.stderr.contains("master_key_not_configured") && sealed.stderr.contains("--p8-path"), "\(sealed)")
            #expect(!sealed.stderr.contains("p8_path"), "\(sealed)")
            let relative = try await admin(["apns-key", "add", "default", "com.example.flags", "KEYID12345", "--p8-path", "AuthKey.p8"], environment)
            #expect(relative.stderr.contains("--p8-path must be an absolute path"), "\(relative)")
        }
    }

    @Test("on the embedded cluster admin seals with the master key serve keeps in the data folder") func onTheEmbeddedClusterAdminSealsWithTheMasterKeyServeKeepsInTheDataFolder() async throws {
        let data = try folderWithKey()
        defer { try? FileManager.default.removeItem(at: data) }
        let keyFile = data.appendingPathComponent("master-key")
        let masterKey = Data(repeating: 7, count: 32).base64EncodedString() + "\n"
        #expect(FileManager.default.createFile(atPath: keyFile.path, contents: Data(masterKey.utf8), attributes: [.posixPermissions: 0o600]))
        let environment = ["CREMA_DATA_DIR": data.path]
        let app = try await admin(["app", "default", "com.example.sealed", "--team-id", "TEAM123456"], environment)
        #expect(app.status == 0, "\(app)")
        let sealed = try await admin(
            ["apns-key", "add", "default", "com.example.sealed", "KEYID12345", "--p8", data.appendingPathComponent("AuthKey.p8").path], environment)
        #expect(sealed.status == 0, "\(sealed)")
        #expect(sealed.stdout.contains("KEYID12345") && sealed.stdout.contains("database"), "\(sealed)")
        // Read, never replaced: a new key would leave what serve sealed unreadable.
        #expect(try String(contentsOf: keyFile, encoding: .utf8) == masterKey)
    }
}
