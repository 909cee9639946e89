import CremaAPI
import CremaClock
import CremaCore
import CremaPostgres
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Logging
import Testing

/// Who may make the directory read every tenant's token settings: its own minute, an administrator, and the very
/// first request of the process, once; never a flood of unverified tokens.
@Suite struct CustomerTokenDirectoryTests {
    /// A JWT-shaped bearer naming `tenant`, signed by nobody: anyone can send one.
    static func unsignedToken(tenant: String) -> String {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"HS256","typ":"JWT"}"#) + "." + part(#"{"sub":"c-1","tenant":"\#(tenant)","exp":4102444800}"#) + ".c2lnbmF0dXJl"
    }

    @Test("a flood of unverified tokens reads the settings once, on the first request, and never again")
    func unverifiedTokensStartNoReload() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let clock = TestClock(Date())
            let directory = CustomerTokenDirectory(
                configured: nil, settings: CremaDatabase(pool: pool, clock: .system).customerTokenSettings, masterKey: nil, logger: Logger(label: "test"),
                clock: clock.crema)
            func trips() async throws -> Int { try await pool.withConnection { $0.roundTrips } }
            let start = try await trips()
            await withTaskGroup(of: Void.self) { group in
                for n in 0..<50 { group.addTask { _ = await directory.verify(Self.unsignedToken(tenant: "brand-\(n % 5)")) } }
            }
            // Fifty callers at once before anything was read: one read, the others waited for it.
            #expect(try await trips() - start == 1)
            await clock.advance(3_600)
            for n in 0..<50 {
                #expect(await directory.verify(Self.unsignedToken(tenant: "brand-\(n)")) == .failure(.unknownTenant))
            }
            #expect(try await trips() - start == 1)
            // An administrator's change (or the directory's own minute) reads again.
            await directory.reload()
            #expect(try await trips() - start == 2)
            await pool.close()
        }
    }
}
