import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

@Suite("barista under concurrency, configuration and watch", .serialized, .timeLimit(.minutes(2)))
struct BaristaConcurrencyTests {
    @Test("two baristas sending ready and cancel on the version they saw: exactly one applies", arguments: 0..<3)
    func readyRacesCancel(round: Int) async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")
            async let ready = crema.barista("ready", "1", "--at", "counter", "--expected-version", "1")
            async let cancel = crema.barista("cancel", "1", "--reason", "out of oat milk", "--expected-version", "1")
            let runs = try await [ready, cancel]

            let winners = runs.filter { $0.status == 0 }
            let losers = runs.filter { $0.status != 0 }
            try #require(winners.count == 1, "\(runs)")
            let loser = try #require(losers.first)
            #expect(loser.status == 75, "\(loser)")
            #expect(loser.stderr.contains("changed since you looked (version 1)"))
            #expect(loser.stderr.contains("was not applied"))

            let order = try await crema.order(id)
            #expect(order["version"]?.intValue == 2)
            #expect(order["events"]?.arrayValue?.count == 2)
            let readyWon = runs[0].status == 0
            #expect(order["state"]?.stringValue == (readyWon ? "ready" : "canceled"))
            // The loser is told what happened instead, and what it can do now.
            #expect(loser.stderr.contains(readyWon ? "it is now ready" : "it is now canceled"))
            #expect(loser.stderr.contains(readyWon ? "allowed now: handoff, cancel" : "allowed now: nothing"))
        }
    }

    @Test("flags beat the environment, which beats the config file, which beats the defaults")
    func configurationPrecedence() async throws {
        try await Crema.with { crema in
            let folder = crema.home.appendingPathComponent(".config/barista")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try """
            # the till's settings
            server = \(crema.url)
            store = "file-store"
            key = \(TestKeys.barista)
            name = Fi
            """.write(to: folder.appendingPathComponent("config"), atomically: true, encoding: .utf8)

            let bare: [String: String?] = ["CREMA_SERVER": nil, "CREMA_BARISTA_KEY": nil, "CREMA_STORE": nil]
            let fromFile = try await crema.barista("config", "--json", environment: bare)
            #expect(fromFile.status == 0, "\(fromFile)")
            let file = try fromFile.json()
            #expect(file["server"]?["source"]?.stringValue == "file")
            #expect(file["store"]?["value"]?.stringValue == "file-store")
            #expect(file["key"]?["value"]?.stringValue == "****" + TestKeys.barista.suffix(4))
            #expect(file["name"]?["value"]?.stringValue == "Fi")

            var mixed = bare
            mixed["CREMA_STORE"] = "env-store"
            let layered = try await crema.barista("config", "--json", "--server", "http://10.9.8.7:9", environment: mixed)
            let settings = try layered.json()
            #expect(settings["server"]?["value"]?.stringValue == "http://10.9.8.7:9")
            #expect(settings["server"]?["source"]?.stringValue == "flag")
            #expect(settings["store"]?["value"]?.stringValue == "env-store")
            #expect(settings["store"]?["source"]?.stringValue == "environment")
            #expect(settings["key"]?["source"]?.stringValue == "file")

            // The file alone is enough to work the queue; --store overrides its store.
            try await crema.place("Ana")
            let queue = try await crema.barista("queue", "--store", crema.store, "--json", environment: bare)
            #expect(queue.status == 0, "\(queue)")
            #expect(try queue.json()["columns"]?["queued"]?.arrayValue?.count == 1)

            // No server anywhere: the default.
            let defaults = try await crema.barista("config", "--json", environment: bare.merging(["HOME": "/nonexistent"]) { $1 })
            #expect(try defaults.json()["server"]?["value"]?.stringValue == "http://127.0.0.1:8080")

            try "server http://x\n".write(to: folder.appendingPathComponent("config"), atomically: true, encoding: .utf8)
            let broken = try await crema.barista("queue", environment: bare)
            #expect(broken.status == 78, "\(broken)")
            #expect(broken.stderr.contains("config:1: expected 'key = value'"))
        }
    }

    @Test("help documents the exit codes and configuration; completion scripts generate")
    func helpAndCompletion() async throws {
        let help = try await Crema.run(Binaries.barista, ["--help"], environment: [:])
        #expect(help.status == 0)
        for code in [0, 1, 64, 65, 66, 69, 75, 76, 77, 78] { #expect(help.stdout.contains("\n  \(code) "), "exit code \(code)") }
        #expect(help.stdout.contains("CREMA_BARISTA_KEY") && help.stdout.contains("CREMA_SERVER") && help.stdout.contains("CREMA_STORE"))
        // The indented blocks stay indented: a wrapped line at column 0 would read as a heading.
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let blocks = try #require(lines.firstIndex { $0.hasPrefix("CONFIGURATION") }).advanced(by: 1)..<(try #require(lines.firstIndex(of: "EXIT CODES")))
        for line in lines[blocks] where !line.isEmpty && line != "OUTPUT" {
            #expect(line.hasPrefix("  "), "a help line lost its indentation: \(line)")
        }
        for shell in ["bash", "zsh", "fish"] {
            let script = try await Crema.run(Binaries.barista, ["--generate-completion-script", shell], environment: [:])
            #expect(script.status == 0)
            #expect(script.stdout.contains("handoff"))
        }
    }

    @Test("queue --watch --json prints the queue again when an order changes")
    func watch() async throws {
        try await Crema.with { crema in
            try await crema.place("Ana")
            let watcher = try WatchProcess(arguments: ["queue", "--watch", "--json"], environment: crema.environment)
            defer { watcher.stop() }
            let first = try #require(await watcher.nextLine())
            #expect(first["columns"]?["queued"]?.arrayValue?.count == 1)

            _ = try await crema.barista("start", "1", "--name", "Sam")
            // Printed only on a change, so the next line is the started order.
            let second = try #require(await watcher.nextLine())
            #expect(second["columns"]?["queued"]?.arrayValue?.isEmpty == true)
            #expect(second["columns"]?["preparing"]?.arrayValue?.first?["barista"]?.stringValue == "Sam")
        }
    }
}

/// A long-running `barista` whose stdout is read line by line.
final class WatchProcess: @unchecked Sendable {
    let process = Process()
    private let lines: AsyncStream<String>

    init(arguments: [String], environment: [String: String]) throws {
        let pipe = Pipe()
        process.executableURL = Binaries.barista
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream<String>.makeStream()
        lines = stream
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread {
            var buffer = ""
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                buffer += String(decoding: data, as: UTF8.self)
                while let newline = buffer.firstIndex(of: "\n") {
                    continuation.yield(String(buffer[..<newline]))
                    buffer = String(buffer[buffer.index(after: newline)...])
                }
            }
            continuation.finish()
        }
        try process.run()
    }

    private var iterator: AsyncStream<String>.Iterator?

    func nextLine() async -> JSONValue? {
        if iterator == nil { iterator = lines.makeAsyncIterator() }
        guard let line = await iterator?.next() else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
