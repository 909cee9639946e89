// Races drivers on one event-shaped transaction: BEGIN, lock the order and claim a key (flight 1), then write
// the order and its event in one statement and COMMIT (flight 2) -- the shape of Crema's order command, on small tables so every
// driver (and pgbench, bench/driver.pgbench.sql) runs the identical SQL. Prints one line of key=value results.
//
// Usage: DriverBench MODE CONNINFO CONCURRENCY SECONDS
//   MODE: crema-pipelined (Crema's driver, two flights), crema-sequential (Crema's driver, one statement per
//         round trip), nio (postgres-nio's PostgresClient, withTransaction, one statement per round trip).
//   CONNINFO: key=value libpq conninfo with host (a socket directory), port, user, dbname.
import CremaPostgres
import Foundation
import Logging
import PostgresNIO

@main
enum DriverBench {
    static let ordersPerClient = 1000

    /// One client's event: order `id` moves to its next version with a fresh key.
    struct Event: Sendable {
        var id: Int
        var key: String
        var data: String
    }

    static func event(client: Int, round: Int) -> Event {
        let id = client * ordersPerClient + round % ordersPerClient + 1
        return Event(id: id, key: "k-\(client)-\(round)-\(UInt64.random(in: 0...UInt64.max))", data: "{\"round\":\(round)}")
    }

    /// Runs `body` for `seconds` on `concurrency` clients; returns events and their latencies in microseconds.
    static func race(concurrency: Int, seconds: Double, _ body: @escaping @Sendable (Int, Int) async throws -> Void) async throws -> (Int, [Double]) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for client in 0..<concurrency {
                group.addTask {
                    var latencies: [Double] = []
                    var round = 0
                    while ContinuousClock.now < deadline {
                        let start = ContinuousClock.now
                        try await body(client, round)
                        let elapsed = ContinuousClock.now - start
                        latencies.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
                        round += 1
                    }
                    return latencies
                }
            }
            var all: [Double] = []
            for try await latencies in group { all += latencies }
            return (all.count, all)
        }
    }

    static func usage() -> (cpu: Double, switches: Int) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (cpu, usage.ru_nvcsw + usage.ru_nivcsw)
    }

    static func parse(_ conninfo: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in conninfo.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
        }
        return values
    }

    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, let concurrency = Int(arguments[3]), let seconds = Double(arguments[4]) else {
            FileHandle.standardError.write("usage: DriverBench crema-pipelined|crema-sequential|nio CONNINFO CONCURRENCY SECONDS\n".data(using: .utf8)!)
            exit(2)
        }
        let mode = arguments[1]
        let conninfo = arguments[2]

        var total = 0
        var latencies: [Double] = []
        let before = usage()
        let started = ContinuousClock.now
        switch mode {
        case "crema-pipelined", "crema-sequential":
            let pool = PostgresPool(.init(conninfo: conninfo, maxConnections: concurrency, acquireTimeout: .seconds(30)))
            let pipelined = mode == "crema-pipelined"
            (total, latencies) = try await race(concurrency: concurrency, seconds: seconds) { client, round in
                let e = event(client: client, round: round)
                try await pool.withTransaction { connection in
                    if pipelined {
                        let read = try await connection.pipeline([
                            "SELECT version, payload FROM bench_orders WHERE id = \(e.id) FOR UPDATE",
                            "INSERT INTO bench_keys (key) VALUES (\(e.key)) ON CONFLICT DO NOTHING RETURNING 1",
                        ])
                        _ = try read[0][0].decode("version", as: Int.self)
                        try await connection.pipeline([
                            "WITH o AS (UPDATE bench_orders SET version = version + 1, payload = \(e.data) WHERE id = \(e.id) RETURNING id, version) INSERT INTO bench_events (id, version, data) SELECT id, version, \(e.data) FROM o",
                            "COMMIT",
                        ])
                    } else {
                        let read = try await connection.query("SELECT version, payload FROM bench_orders WHERE id = \(e.id) FOR UPDATE")
                        try await connection.query("INSERT INTO bench_keys (key) VALUES (\(e.key)) ON CONFLICT DO NOTHING RETURNING 1")
                        _ = try read[0].decode("version", as: Int.self)
                        try await connection.query(
                            "WITH o AS (UPDATE bench_orders SET version = version + 1, payload = \(e.data) WHERE id = \(e.id) RETURNING id, version) INSERT INTO bench_events (id, version, data) SELECT id, version, \(e.data) FROM o")
                    }
                }
            }
            await pool.close()
        case "nio":
            let values = parse(conninfo)
            let configuration = PostgresClient.Configuration(
                unixSocketPath: "\(values["host"] ?? "/tmp")/.s.PGSQL.\(values["port"] ?? "5432")", username: values["user"] ?? "postgres",
                password: nil, database: values["dbname"])
            var options = configuration
            options.options.maximumConnections = concurrency
            options.options.minimumConnections = concurrency
            let logger = Logger(label: "driver-bench")
            let client = PostgresClient(configuration: options, backgroundLogger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                (total, latencies) = try await race(concurrency: concurrency, seconds: seconds) { clientIndex, round in
                    let e = event(client: clientIndex, round: round)
                    try await client.withTransaction(logger: logger) { connection in
                        let rows = try await connection.query("SELECT version, payload FROM bench_orders WHERE id = \(e.id) FOR UPDATE", logger: logger)
                        for try await (_, _) in rows.decode((Int, String).self) {}
                        try await connection.query("INSERT INTO bench_keys (key) VALUES (\(e.key)) ON CONFLICT DO NOTHING RETURNING 1", logger: logger)
                        try await connection.query(
                            "WITH o AS (UPDATE bench_orders SET version = version + 1, payload = \(e.data) WHERE id = \(e.id) RETURNING id, version) INSERT INTO bench_events (id, version, data) SELECT id, version, \(e.data) FROM o",
                            logger: logger)
                    }
                }
                group.cancelAll()
            }
        default:
            FileHandle.standardError.write("unknown mode \(mode)\n".data(using: .utf8)!)
            exit(2)
        }
        let elapsed = ContinuousClock.now - started
        let after = usage()
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        latencies.sort()
        let sorted = latencies
        func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        func f(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }
        let events = Double(max(total, 1))
        print(
            "mode=\(mode) c=\(concurrency) events=\(total) events_per_s=\(f(Double(total) / wall, 0)) p50_ms=\(f(percentile(0.5) / 1000))"
                + " p99_ms=\(f(percentile(0.99) / 1000)) client_cpu_ms_per_event=\(f((after.cpu - before.cpu) * 1000 / events, 4))"
                + " client_switches_per_event=\(f(Double(after.switches - before.switches) / events, 2))")
    }
}
