import CremaPostgres
import Foundation

/// The workers of a Citus cluster whose coordinator is the test cluster (`scripts/citus-test` sets
/// `CREMA_TEST_CITUS_COORDINATOR` and `CREMA_TEST_CITUS_WORKERS`, each `host:port`, the host a socket folder). Citus
/// keeps its metadata per database, so each test database is created on every node with the extension, and the
/// coordinator's copy is told where the workers are; `TestDatabase` then migrates and distributes it as
/// `crema migrate` does. Without the variables the suites run on plain PostgreSQL, as CI runs them.
struct CitusTestCluster: Sendable {
    struct Node: Sendable {
        var host: String
        var port: Int
    }

    let coordinator: Node
    let workers: [Node]
    /// The admin conninfo of the coordinator (the test cluster); a worker's is this one pointed at its host and port.
    let server: String

    /// Shards per distributed table in a test database: enough to put tenants on both workers, few enough that the
    /// hundreds of databases a run creates stay quick (Citus's default is 32).
    static let shardCount = 4

    static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CitusTestCluster? {
        guard let workers = environment["CREMA_TEST_CITUS_WORKERS"], !workers.isEmpty,
              let coordinator = environment["CREMA_TEST_CITUS_COORDINATOR"].flatMap(node) else { return nil }
        return CitusTestCluster(
            coordinator: coordinator, workers: workers.split(separator: ",").compactMap { node(String($0)) },
            server: try TestDatabase.serverConninfo())
    }

    /// `host:port`, split at the last colon (a socket folder may hold none, but may be long).
    private static func node(_ text: String) -> Node? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        return Node(host: String(text[..<colon]), port: port)
    }

    private func conninfo(_ node: Node, database: String) -> String {
        "\(server) host='\(node.host)' port=\(node.port) dbname=\(database)"
    }

    /// One test database prepared at a time: `citus_add_node` writes the role `crema` on each worker, and two at once
    /// failed there ("tuple concurrently updated"); `CREATE EXTENSION citus` is slow, and dozens at once outlasted the
    /// connections' statement timeout.
    private static let gate = Gate()

    /// Creates `database` on every worker with the extension, then adds the extension and the nodes to the
    /// coordinator's copy (already created by the caller, at `coordinator`).
    func prepare(database: String, coordinator conninfo: String) async throws {
        await Self.gate.enter()
        do {
            try await prepareAlone(database: database, coordinator: conninfo)
        } catch {
            await Self.gate.leave()
            throw error
        }
        await Self.gate.leave()
    }

    private func prepareAlone(database: String, coordinator conninfo: String) async throws {
        for worker in workers {
            let admin = try await TestDatabase.adminConnection(self.conninfo(worker, database: "postgres"))
            try await admin.simpleQuery("CREATE DATABASE \(database)")
            await admin.close()
            let connection = try await TestDatabase.adminConnection(self.conninfo(worker, database: database))
            try await connection.simpleQuery("CREATE EXTENSION citus")
            await connection.close()
        }
        let connection = try await PostgresConnection.connect(conninfo)
        do {
            try await connection.simpleQuery("SET statement_timeout TO 0")
            try await connection.simpleQuery("CREATE EXTENSION citus")
            try await connection.simpleQuery("ALTER DATABASE \(database) SET citus.shard_count TO \(Self.shardCount)")
            try await connection.simpleQuery("SET citus.shard_count TO \(Self.shardCount)")
            _ = try await connection.query("SELECT citus_set_coordinator_host(\(coordinator.host), \(coordinator.port))")
            for worker in workers {
                _ = try await connection.query("SELECT citus_add_node(\(worker.host), \(worker.port))")
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// Drops `database` from every worker (the coordinator's copy is the caller's).
    func drop(database: String) async {
        for worker in workers {
            guard let admin = try? await TestDatabase.adminConnection(conninfo(worker, database: "postgres")) else { continue }
            try? await admin.simpleQuery("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            await admin.close()
        }
    }

    /// An async mutex: `enter` waits until every earlier `enter` has left.
    private actor Gate {
        private var busy = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func enter() async {
            guard busy else {
                busy = true
                return
            }
            await withCheckedContinuation { waiters.append($0) }
        }

        func leave() {
            if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
        }
    }
}
