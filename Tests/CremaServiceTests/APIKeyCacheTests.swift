import CremaClock
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// A flood of requests with one generated key, refused or not, reads the key once per `APIKeyCache.freshFor`; a key
/// revoked through this process is refused at once.
@Suite struct APIKeyCacheTests {
    @Test("a thousand checks of one key read it once; the next period reads it again; a forgotten key is read at once")
    func oneReadPerKeyAndPeriod() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let database = CremaDatabase(pool: pool, clock: .system)
            let admin = AdminService(database: database, masterKey: nil, clock: .system)
            let (_, presented) = try await admin.issueAPIKey(tenant: "default", NewAPIKey(role: "pos"))
            let clock = TestClock(Date())
            let cache = APIKeyCache()
            let verifier = APIKeyVerifier(keys: database.apiKeys, cache: cache, clock: clock.crema)
            func trips() async throws -> Int { try await pool.withConnection { $0.roundTrips } }
            let start = try await trips()
            for _ in 0..<1_000 {
                guard case .success? = try await verifier.verify(Substring(presented)) else { Issue.record("refused"); return }
            }
            // A wrong secret for a known id is refused from what was read, too.
            #expect(try await verifier.verify(Substring(presented.dropLast() + "x")) == nil)
            #expect(try await trips() - start == 1)
            await clock.advance(APIKeyCache.freshFor)
            _ = try await verifier.verify(Substring(presented))
            #expect(try await trips() - start == 2)
            let id = try #require(APIKeySecret.id(of: Substring(presented)))
            _ = try await admin.revokeAPIKey(tenant: "default", id: id)
            cache.forget(id)
            #expect(try await verifier.verify(Substring(presented)) == .failure(.revoked))
            await pool.close()
        }
    }
}
