public import Foundation
public import Logging

/// A private PostgreSQL cluster in a project folder, run with the system's `initdb` and `pg_ctl`, so a
/// newcomer needs no database set-up. It listens on a Unix socket inside its folder only (no TCP port to
/// collide with). When Crema runs as root the cluster runs as the `postgres` user, because `initdb` refuses root.
public struct EmbeddedCluster: Sendable {
    /// The folder holding `data/`, the socket and `postgres.log`.
    public let directory: URL
    public let database: String
    public let user = "crema"
    /// Only names the socket file (`.s.PGSQL.<port>`); nothing listens on TCP.
    public let port = 5432
    /// The folder of the cluster this one is a hot standby of (made by `pg_basebackup`, streaming from it); nil: a primary.
    public let standbyOf: URL?
    /// `max_connections` of a server this value starts (one already running keeps its own).
    public let maxConnections: Int
    private let logger: Logger

    /// Room for a `crema serve` and a `crema dispatch` or two with their pools.
    public static let defaultMaxConnections = 400

    public init(
        directory: URL, database: String = "crema", standbyOf primary: URL? = nil, maxConnections: Int = defaultMaxConnections,
        logger: Logger = Logger(label: "crema.embedded-postgres")
    ) {
        self.directory = directory.standardizedFileURL
        self.database = database
        self.standbyOf = primary?.standardizedFileURL
        self.maxConnections = maxConnections
        self.logger = logger
    }

    /// The libpq conninfo of the cluster's database.
    public var conninfo: String { conninfo(database: database) }

    /// Values are single-quoted, so a folder with spaces works.
    private func conninfo(database: String) -> String {
        "host=\(Self.quoted(directory.path)) port=\(port) user=\(user) dbname=\(Self.quoted(database))"
    }

    private static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private var dataDirectory: URL { directory.appendingPathComponent("data") }
    private var logFile: URL { directory.appendingPathComponent("postgres.log") }

    /// Creates the cluster if needed, starts it unless it is already running, and creates the database.
    /// Returns the conninfo, and whether this call started the server (so only that caller stops it).
    @discardableResult
    public func start() async throws -> (conninfo: String, startedHere: Bool) {
        let tools = try PostgresTools.locate()
        // Owner-only: the cluster trusts local connections, so only its owner (and root) may reach the socket.
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        if isRoot { try await prepareForPostgresUser() }
        if !FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path), let primary = standbyOf {
            // A copy of the running primary that keeps streaming from it (`-R` writes primary_conninfo and standby.signal).
            logger.info("creating a standby of a private PostgreSQL cluster", metadata: ["path": "\(dataDirectory.path)", "primary": "\(primary.path)"])
            try await runAsOwner(
                tools.pgBasebackup, ["-D", dataDirectory.path, "-R", "-X", "stream", "-c", "fast", "-h", primary.path, "-p", "\(port)", "-U", user])
        } else if !FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) {
            logger.info("creating a private PostgreSQL cluster", metadata: ["path": "\(dataDirectory.path)"])
            try await runAsOwner(
                tools.initdb,
                ["-D", dataDirectory.path, "-U", user, "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions"])
        }
        let startedHere: Bool
        if try await isRunning(tools) {
            logger.info("reusing the running private PostgreSQL cluster", metadata: ["path": "\(directory.path)"])
            startedHere = false
        } else {
            startedHere = true
            let options =
                "-c listen_addresses='' -k \(Self.quoted(directory.path)) -c unix_socket_permissions=0700 -p \(port) "
                + "-c max_connections=\(maxConnections)"
            try await runAsOwner(tools.pgCtl, ["start", "-w", "-t", "60", "-D", dataDirectory.path, "-l", logFile.path, "-o", options])
        }
        // A standby is read-only: the database comes from its primary.
        let readOnly = standbyOf == nil ? false : try await isInRecovery()
        if !readOnly { try await createDatabaseIfMissing() }
        return (conninfo, startedHere)
    }

    /// Ends recovery: a standby becomes a primary that takes writes (`pg_ctl promote`, waiting until it does).
    public func promote() async throws {
        try await runAsOwner(try PostgresTools.locate().pgCtl, ["promote", "-w", "-t", "60", "-D", dataDirectory.path])
    }

    private func isInRecovery() async throws -> Bool {
        let connection = try await PostgresConnection.connect(conninfo(database: "postgres"), logger: logger)
        let recovery: Bool
        do {
            recovery = try await connection.query("SELECT pg_is_in_recovery() AS recovery").first?.decode("recovery", as: Bool.self) ?? false
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
        return recovery
    }

    /// Stops the cluster (fast shutdown: open sessions are ended, committed data is safe).
    public func stop() async throws {
        let tools = try PostgresTools.locate()
        guard try await isRunning(tools) else { return }
        try await runAsOwner(tools.pgCtl, ["stop", "-w", "-m", "fast", "-D", dataDirectory.path])
    }

    public func isRunning() async throws -> Bool { try await isRunning(try PostgresTools.locate()) }

    private func isRunning(_ tools: PostgresTools) async throws -> Bool {
        guard FileManager.default.fileExists(atPath: dataDirectory.path) else { return false }
        return try await runAsOwner(tools.pgCtl, ["status", "-D", dataDirectory.path], allowFailure: true).status == 0
    }

    private func createDatabaseIfMissing() async throws {
        // CREATE DATABASE takes no parameters; the name must be a plain identifier.
        guard database.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw EmbeddedClusterError.badDatabaseName(database)
        }
        let admin = try await PostgresConnection.connect(conninfo(database: "postgres"), logger: logger)
        do {
            if try await admin.query("SELECT 1 FROM pg_database WHERE datname = \(database)").isEmpty {
                try await admin.simpleQuery("CREATE DATABASE \(database)")
            }
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
    }

    // MARK: - Running as the cluster's owner

    private var isRoot: Bool { geteuid() == 0 }

    /// As root: hands the folder to `postgres` and makes sure that user can reach it (adds the
    /// search bit, never read permission, to parent folders such as a 0700 `mktemp -d`).
    private func prepareForPostgresUser() async throws {
        _ = try await ProcessRunner.run("/bin/chown", ["-R", "postgres:postgres", directory.path]).checked("chown")
        var parent = directory.deletingLastPathComponent()
        while parent.path != "/" {
            let attributes = try FileManager.default.attributesOfItem(atPath: parent.path)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value ?? 0
            if mode & 0o001 == 0 {
                logger.notice("letting the postgres user traverse a parent folder", metadata: ["path": "\(parent.path)"])
                try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: mode | 0o001)], ofItemAtPath: parent.path)
            }
            parent = parent.deletingLastPathComponent()
        }
    }

    @discardableResult
    private func runAsOwner(_ tool: String, _ arguments: [String], allowFailure: Bool = false) async throws -> ProcessRunner.Output {
        let output =
            isRoot
            ? try await ProcessRunner.run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
            : try await ProcessRunner.run(tool, arguments)
        return allowFailure ? output : try output.checked((tool as NSString).lastPathComponent)
    }
}

/// Why the embedded cluster could not start.
public enum EmbeddedClusterError: Error, Sendable, CustomStringConvertible {
    case toolsNotFound
    case commandFailed(tool: String, status: Int32, output: String)
    case badDatabaseName(String)

    public var code: String {
        switch self {
        case .toolsNotFound: "postgres_tools_not_found"
        case .commandFailed: "postgres_command_failed"
        case .badDatabaseName: "bad_database_name"
        }
    }

    public var description: String {
        switch self {
        case .toolsNotFound:
            "PostgreSQL's initdb and pg_ctl were not found: install the 'postgresql' package (apt-get install postgresql) or set CREMA_PG_BINDIR"
        case .commandFailed(let tool, let status, let output):
            "\(tool) exited with status \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))"
        case .badDatabaseName(let name): "'\(name)' is not a plain database name"
        }
    }
}

extension ProcessRunner.Output {
    fileprivate func checked(_ tool: String) throws -> Self {
        guard status == 0 else { throw EmbeddedClusterError.commandFailed(tool: tool, status: status, output: text) }
        return self
    }
}

/// Where the server binaries are: `CREMA_PG_BINDIR`, else the newest `/usr/lib/postgresql/<n>/bin`
/// (Debian keeps them off PATH), else PATH.
struct PostgresTools {
    var initdb: String
    var pgCtl: String
    var pgBasebackup: String

    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresTools {
        var candidates: [String] = []
        if let bin = environment["CREMA_PG_BINDIR"] { candidates.append(bin) }
        let debian = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? []).compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "\(debian)/\($0)/bin" }
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for bin in candidates where FileManager.default.isExecutableFile(atPath: "\(bin)/initdb") {
            return PostgresTools(initdb: "\(bin)/initdb", pgCtl: "\(bin)/pg_ctl", pgBasebackup: "\(bin)/pg_basebackup")
        }
        throw EmbeddedClusterError.toolsNotFound
    }
}
