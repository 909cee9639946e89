import CremaAPNsProtocol
import CremaTestSupport
import Foundation
import Testing

/// `crema serve`'s start-up refusals, run as the real binary (this target builds and runs the executables).
/// A missing or wrong setting is one line on standard error and exit 78 (`EX_CONFIG`), never a trap.
@Suite(.timeLimit(.minutes(2))) struct CremaStartupTests {
    func serve(_ environment: [String: String]) async throws -> BaristaRun {
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        for (name, value) in environment { base[name] = value }
        return try await Crema.run(Binaries.crema, ["serve", "--port", "0"], environment: base)
    }

    @Test("a database without API keys is a configuration error not a crash") func aDatabaseWithoutAPIKeysIsAConfigurationErrorNotACrash() async throws {
        let run = try await serve(["CREMA_DATABASE_URL": "host=/nonexistent dbname=crema"])
        #expect(run.status == 78, "\(run)")
        #expect(run.stderr.contains("CREMA_API_KEYS is not set"), "\(run)")
        #expect(!run.stderr.contains("Fatal error"), "\(run)")
        #expect(!run.stderr.contains("Client not shut down"), "\(run)")
    }

    @Test("an invalid port is a configuration error") func anInvalidPortIsAConfigurationError() async throws {
        let run = try await serve(["CREMA_DATABASE_URL": "host=/nonexistent", "CREMA_HTTP_PORT": "eighty", "CREMA_API_KEYS": TestKeys.environmentValue])
        #expect(run.status == 78, "\(run)")
        #expect(run.stderr.contains("CREMA_HTTP_PORT"), "\(run)")
    }

    @Test("a wrong database URL names host port database user and reason in serve migrate and admin but never the password") func aWrongDatabaseURLNamesHostPortDatabaseUserAndReasonInServeMigrateAndAdminButNeverThePassword() async throws {
        let url = "postgresql://nobody:hunter2-secret@127.0.0.1:1/nowhere?connect_timeout=2"
        for (arguments, level) in [(["serve", "--port", "0"], "info"), (["migrate"], "info"), (["admin", "tenants"], "info"), (["serve", "--port", "0"], "debug")] {
            let run = try await Crema.run(Binaries.crema, arguments, environment: [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory(),
                "CREMA_DATABASE_URL": url, "CREMA_API_KEYS": TestKeys.environmentValue, "LOG_LEVEL": level,
            ])
            #expect(run.status != 0, "\(arguments) \(run)")
            for part in ["host 127.0.0.1", "port 1", "database nowhere", "user nobody", "Connection refused"] {
                #expect(run.stderr.contains(part), "\(arguments) at \(level): \(part) missing from \(run)")
            }
            #expect(!run.stderr.contains("hunter2-secret") && !run.stdout.contains("hunter2-secret"), "\(arguments) \(run)")
        }
    }

    @Test("version prints the version rather than serves usage") func versionPrintsTheVersionRatherThanServesUsage() async throws {
        let run = try await Crema.run(Binaries.crema, ["--version"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3, "\(run)")
        #expect(!run.stderr.contains("Usage"), "\(run)")
    }

    @Test("an unreadable APNs key is a configuration error") func anUnreadableAPNsKeyIsAConfigurationError() async throws {
        try await TestDatabase.with { db in
            let run = try await serve([
                "CREMA_DATABASE_URL": db.conninfo, "CREMA_API_KEYS": TestKeys.environmentValue,
                "CREMA_APNS_KEY_FILE": "/nonexistent/AuthKey.p8", "CREMA_APNS_KEY_ID": "ABCDE12345", "CREMA_APNS_TEAM_ID": "TEAM123456",
                "CREMA_APNS_TOPIC": "cafe.crema.example",
            ])
            #expect(run.status == 78, "\(run)")
            #expect(run.stderr.contains("CREMA_APNS_KEY_FILE"), "\(run)")
            #expect(!run.stderr.contains("Fatal error"), "\(run)")
        }
    }
}
