import CremaTestSupport
import Foundation
import Testing

/// One `crema serve` per private cluster, run as the real binary: a second one on the same folder is refused, and a
/// cluster left running by a serve that crashed is stopped by the next one when it ends.
@Suite(.serialized, .timeLimit(.minutes(3))) struct EmbeddedServeTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("crema-embedded-\(UUID().uuidString.prefix(8))")
    }

    static func environment(_ data: URL) -> [String: String] {
        ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "CREMA_DATA_DIR": data.path,
         "CREMA_DATABASE_URL": "", "LOG_LEVEL": "error"]
    }

    /// Whether the folder's cluster is running (`crema postgres status`: 0 running, 3 stopped).
    static func clusterRuns(_ data: URL) async throws -> Bool {
        let status = try await Crema.run(
            Binaries.crema, ["postgres", "status", "--dir", data.appendingPathComponent("postgres").path], environment: environment(data))
        return status.status == 0
    }

    static func stopCluster(_ data: URL) async {
        _ = try? await Crema.run(
            Binaries.crema, ["postgres", "stop", "--dir", data.appendingPathComponent("postgres").path], environment: environment(data))
        try? FileManager.default.removeItem(at: data)
    }

    @Test("a second serve on the same cluster is refused naming the first") func aSecondServeOnTheSameClusterIsRefusedNamingTheFirst() async throws {
        let data = Self.folder()
        let first = try await ServerProcess.start(conninfo: "", environment: ["CREMA_DATA_DIR": data.path])
        let second = try await Crema.run(Binaries.crema, ["serve", "--port", "0"], environment: Self.environment(data))
        first.stop()
        let stoppedWithTheFirst = !(try await Self.clusterRuns(data))
        await Self.stopCluster(data)
        #expect(second.status != 0, "\(second)")
        #expect(second.stderr.contains("another crema serve (pid \(first.pid))"), "\(second)")
        #expect(stoppedWithTheFirst, "the second serve's refusal must not have taken the cluster from the first")
    }

    @Test("a cluster left by a crashed serve is stopped by the next serve when it ends") func aClusterLeftByACrashedServeIsStoppedByTheNextServeWhenItEnds() async throws {
        let data = Self.folder()
        let crashed = try await ServerProcess.start(conninfo: "", environment: ["CREMA_DATA_DIR": data.path])
        crashed.kill()
        let leftRunning = try await Self.clusterRuns(data)
        let next = try await ServerProcess.start(conninfo: "", environment: ["CREMA_DATA_DIR": data.path])
        next.stop()
        let stillRunning = try await Self.clusterRuns(data)
        await Self.stopCluster(data)
        #expect(leftRunning)
        #expect(!stillRunning, "the next serve's Ctrl-C stops the cluster it found left running")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("serve.pid").path))
    }

    /// `scripts/run 2>&1 | tee log`, then Ctrl-C: the terminal's SIGINT ends `tee` too, and crema's shutdown lines then
    /// go to a pipe nobody reads. They must be lost, not crema: it still stops the cluster it started. (It did not:
    /// "Stopping the private PostgreSQL cluster…" trapped in FileHandle.write on EPIPE, and the cluster stayed up.)
    @Test("Ctrl-C stops the private cluster even when the reader of crema's output is gone")
    func ctrlCStopsThePrivateClusterEvenWhenTheReaderOfCremasOutputIsGone() async throws {
        let data = Self.folder()
        let process = Process()
        // Started as a shell starts it, with SIGPIPE's default action (kill): this test process ignores SIGPIPE, and an
        // ignored signal would stay ignored in the child, hiding what a terminal's `| tee` does.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal=PIPE", Binaries.crema.path, "serve", "--port", "0"]
        process.environment = Self.environment(data).merging(["LOG_LEVEL": "info"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let exited = TestEvent()
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let reader = output.fileHandleForReading
        // Reads until crema listens, then closes the only read end, as tee does when Ctrl-C ends it.
        let listened: Bool = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var text = ""
                while !text.contains("Crema is listening on") {
                    let data = reader.availableData
                    if data.isEmpty { break }
                    text += String(decoding: data, as: UTF8.self)
                }
                try? reader.close()
                continuation.resume(returning: text.contains("Crema is listening on"))
            }
        }
        try? output.fileHandleForWriting.close()
        process.interrupt()
        await exited.wait()
        let clusterRuns = try await Self.clusterRuns(data)
        await Self.stopCluster(data)
        #expect(listened)
        #expect(process.terminationReason == .exit, "crema was killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 0)
        #expect(!clusterRuns, "the private cluster must stop with crema")
    }
}
