import CremaAPNsProtocol
import AsyncHTTPClient
import CremaCore
import CremaTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The folder `swift build` put the executables in: next to the test bundle when it runs from there,
/// else `.build/debug` of this package.
enum Binaries {
    static let directory: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("barista").path) }
            ?? candidates.last!
    }()

    static var barista: URL { directory.appendingPathComponent("barista") }
    static var crema: URL { directory.appendingPathComponent("crema") }
}

/// Fixed keys for the server under test (each ≥ 16 characters, as Crema requires).
enum TestKeys {
    static let pos = "pos-key-for-barista-tests"
    static let barista = "barista-key-for-barista-tests"
    static let dashboard = "dashboard-key-for-barista-tests"
    static let app = "app-key-for-barista-tests"
    static var environmentValue: String { "pos:\(pos),barista:\(barista),dashboard:\(dashboard),app:\(app)" }
}

/// What one `barista` run did.
struct BaristaRun: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The last stdout line as JSON (`--json` prints one object per line).
    func json() throws -> JSONValue {
        let line = try #require(stdout.split(separator: "\n").last, "no output; stderr: \(stderr)")
        return try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
    }

    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// A real `crema serve --port 0` on a fresh migrated database, the `barista` binary pointed at it, and a
/// POS-side HTTP client to set the scene.
struct Crema: Sendable {
    let url: String
    let store = "market-st"
    let home: URL

    /// Starts a server on a fresh database, runs `body`, then stops the server and drops the database.
    static func with(_ label: String = #function, _ body: (Crema) async throws -> Void) async throws {
        try await TestDatabase.with(label) { database in
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("barista-home-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: home) }
            let server = try await ServerProcess.start(conninfo: database.conninfo)
            do {
                let crema = Crema(url: server.url, home: home)
                try await crema.putStore()
                try await body(crema)
                server.stop()
            } catch {
                server.stop()
                throw error
            }
        }
    }

    // MARK: - Running barista

    /// The environment a till would have: server, barista key and store set, and a private HOME so no
    /// config file of the machine leaks in.
    var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home.path,
            "CREMA_SERVER": url, "CREMA_BARISTA_KEY": TestKeys.barista, "CREMA_STORE": store, "USER": "tester",
        ]
    }

    func barista(_ arguments: String..., environment overrides: [String: String?] = [:]) async throws -> BaristaRun {
        var environment = self.environment
        for (name, value) in overrides { environment[name] = value }
        return try await Self.run(Binaries.barista, arguments, environment: environment)
    }

    /// Runs an executable to completion with stdout and stderr captured in files (no pipe can fill up).
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String]) async throws -> BaristaRun {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("barista-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        return BaristaRun(
            status: status, stdout: try String(contentsOf: out, encoding: .utf8), stderr: try String(contentsOf: err, encoding: .utf8))
    }

    // MARK: - The POS side, straight over HTTP

    func putStore() async throws {
        let (status, _) = try await api(.PUT, "/v1/stores/\(store)", key: TestKeys.pos, body: ["name": "Market St", "timezone": "UTC"])
        #expect(status == 201)
    }

    /// Places an order as the till does and returns its id.
    @discardableResult
    func place(_ name: String, items: JSONValue = [["name": "Oat latte", "size": "grande", "quantity": 1, "modifiers": ["extra shot"]]])
        async throws -> String
    {
        let eta = Date().addingTimeInterval(300).formatted(Date.ISO8601FormatStyle())
        let body: JSONValue = [
            "store_id": .string(store), "pos_ref": .string("T-\(name)"), "display_name": .string(name), "locale": "en", "items": items,
            "eta": .string(eta),
        ]
        let (status, order) = try await api(.POST, "/v1/orders", key: TestKeys.pos, body: body, idempotencyKey: UUID().uuidString)
        try #require(status == 201, "placing failed: \(order)")
        return try #require(order["id"]?.stringValue)
    }

    /// The order as the API has it now, with its history.
    func order(_ id: String) async throws -> JSONValue {
        let (status, order) = try await api(.GET, "/v1/orders/\(id)", key: TestKeys.pos)
        try #require(status == 200)
        return order
    }

    func api(_ method: HTTPMethod, _ path: String, key: String, body: JSONValue? = nil, idempotencyKey: String? = nil) async throws
        -> (Int, JSONValue)
    {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
        if let body { request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body))) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        let json = bytes.readableBytes == 0 ? JSONValue.null : try JSONDecoder().decode(JSONValue.self, from: Data(bytes.readableBytesView))
        return (Int(response.status.code), json)
    }
}

/// A `crema serve --port 0` child process; its port comes from the line it prints when listening.
final class ServerProcess: @unchecked Sendable {
    let process: Process
    let url: String

    private init(process: Process, url: String) {
        self.process = process
        self.url = url
    }

    /// `environment`: more variables for the server (they win over the defaults).
    static func start(conninfo: String, environment extra: [String: String] = [:]) async throws -> ServerProcess {
        let process = Process()
        process.executableURL = Binaries.crema
        process.arguments = ["serve", "--port", "0"]
        process.environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "CREMA_DATABASE_URL": conninfo,
            "CREMA_API_KEYS": TestKeys.environmentValue, "LOG_LEVEL": "error",
        ].merging(extra) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let reader = output.fileHandleForReading
        // Reads on a thread of its own until the listening line, then keeps draining so the pipe never fills.
        let url: String? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var text = ""
                var resumed = false
                while true {
                    let data = reader.availableData
                    if data.isEmpty { break }
                    guard !resumed else { continue }
                    text += String(decoding: data, as: UTF8.self)
                    if let range = text.range(of: #"Crema is listening on (http://[^\s]+)"#, options: .regularExpression) {
                        let url = text[range].replacingOccurrences(of: "Crema is listening on ", with: "")
                        resumed = true
                        continuation.resume(returning: url)
                    }
                }
                if !resumed { continuation.resume(returning: nil) }
            }
        }
        guard let url else {
            process.waitUntilExit()
            throw ServerFailure(message: "crema serve exited (\(process.terminationStatus)) before listening")
        }
        return ServerProcess(process: process, url: url)
    }

    /// The server's process id.
    var pid: Int32 { process.processIdentifier }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// `kill -9`: the process ends at once, with whatever it had in flight.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    struct ServerFailure: Error { var message: String }
}

/// A loopback port where nothing listens: bound (so nobody else takes it) but never listening.
final class DeadPort: @unchecked Sendable {
    let port: Int
    private let socketDescriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw ServerProcess.ServerFailure(message: "cannot bind a loopback port")
        }
        socketDescriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socketDescriptor) }
}
