public import CremaPostgres
import Foundation

/// A private primary and its streaming hot standby, in a fresh folder of their own: the shared test cluster cannot be
/// paused, stopped or failed over without breaking the other suites. Made by the project's own `EmbeddedCluster`
/// (`initdb`, then `pg_basebackup -R`), as the postgres user when the tests run as root.
public struct ReplicatedClusters: Sendable {
    public let primary: EmbeddedCluster
    public let standby: EmbeddedCluster
    /// Further streaming standbys of `primary` (`extraStandbys`), for a test that needs one a failover leaves behind.
    public let extraStandbys: [EmbeddedCluster]
    let folder: URL

    /// Both servers up, the standby (and `extraStandbys` more) streaming; `database` exists on all of them.
    public static func start(database: String = "crema", extraStandbys: Int = 0) async throws -> ReplicatedClusters {
        // Under the temporary folder, with short names, whatever the checkout's depth: a Unix socket's path must fit in
        // 107 bytes.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crema-r/\(UUID().uuidString.prefix(8).lowercased())")
        let primary = EmbeddedCluster(directory: folder.appendingPathComponent("p"), database: database)
        let standby = EmbeddedCluster(directory: folder.appendingPathComponent("s"), database: database, standbyOf: primary.directory)
        let extra = (0..<extraStandbys).map {
            EmbeddedCluster(directory: folder.appendingPathComponent("s\($0 + 2)"), database: database, standbyOf: primary.directory)
        }
        let clusters = ReplicatedClusters(primary: primary, standby: standby, extraStandbys: extra, folder: folder)
        do {
            try await primary.start()
            try await standby.start()
            for cluster in extra { _ = try await cluster.start() }
        } catch {
            await clusters.stop()
            throw error
        }
        return clusters
    }

    /// Runs `body` with a fresh pair, stopped and removed afterwards whether `body` throws or not.
    public static func with<T: Sendable>(
        database: String = "crema", extraStandbys: Int = 0, _ body: (ReplicatedClusters) async throws -> T
    ) async throws -> T {
        let clusters = try await start(database: database, extraStandbys: extraStandbys)
        do {
            let value = try await body(clusters)
            await clusters.stop()
            return value
        } catch {
            await clusters.stop()
            throw error
        }
    }

    /// Both servers' hosts in one libpq conninfo, `target_session_attrs` choosing among them (libpq's multi-host form).
    public func multiHostConninfo(targetSessionAttrs: String) -> String {
        "host='\(primary.directory.path),\(standby.directory.path)' port=\(primary.port),\(standby.port) user=\(primary.user) "
            + "dbname=\(primary.database) target_session_attrs=\(targetSessionAttrs) connect_timeout=10"
    }

    /// Returns once `standby` has replayed everything `primary` had written when this was called: the wait is one
    /// statement on the standby (a loop inside the server, bounded by a statement timeout), not time in the test.
    public static func caughtUp(primary: PostgresPool, standby: PostgresPool) async throws {
        let position = try await primary.withConnection { connection in
            try await connection.query("SELECT pg_current_wal_lsn()::text AS lsn").first?.decode("lsn", as: String.self) ?? ""
        }
        // DO takes no parameters: the position is checked to be an LSN before it is written into the block.
        guard position.wholeMatch(of: /[0-9A-F]+\/[0-9A-F]+/) != nil else { throw PostgresError(.decoding, detail: "not an LSN: \(position)") }
        try await standby.withConnection { connection in
            try await connection.simpleQuery("SET statement_timeout TO '120s'")
            try await connection.simpleQuery(
                """
                DO $$BEGIN
                    WHILE NOT coalesce(pg_last_wal_replay_lsn() >= '\(position)'::pg_lsn, false) LOOP PERFORM pg_sleep(0.005); END LOOP;
                END$$
                """)
            try await connection.simpleQuery("RESET statement_timeout")
        }
    }

    /// Stops both servers and removes their folder; a folder whose server would not stop is left, to be looked at.
    public func stop() async {
        var stopped = true
        for cluster in extraStandbys + [standby, primary] {
            do {
                try await cluster.stop()
            } catch {
                stopped = false
                print("could not stop the test cluster in \(cluster.directory.path): \(error)")
            }
        }
        if stopped { try? FileManager.default.removeItem(at: folder) }
    }
}
