import CremaTestSupport
import Foundation
import Testing

/// `.crema/apns-sim/url` belongs to the listening serve on the private cluster, run as the real binary.
@Suite(.timeLimit(.minutes(3))) struct SimulatorURLFileTests {
    @Test("only a listening serve on the private cluster publishes the simulator URL and it removes only its own") func onlyAListeningServeOnThePrivateClusterPublishesTheSimulatorURLAndItRemovesOnlyItsOwn() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("crema-sim-url-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: data) }
        let urlFile = data.appendingPathComponent("apns-sim").appendingPathComponent("url")

        // On a shared database the simulator gets no pushes: the file is never written.
        try await TestDatabase.with { db in
            let server = try await ServerProcess.start(conninfo: db.conninfo, environment: ["CREMA_DATA_DIR": data.path])
            let written = FileManager.default.fileExists(atPath: urlFile.path)
            server.stop()
            #expect(!written)
        }

        // On the private cluster: there once the server listens, gone after it exits.
        let first = try await ServerProcess.start(conninfo: "", environment: ["CREMA_DATA_DIR": data.path])
        let published = try? String(contentsOf: urlFile, encoding: .utf8)
        first.stop()
        #expect(published?.hasPrefix("https://127.0.0.1:") == true, "\(published ?? "no file")")
        #expect(!FileManager.default.fileExists(atPath: urlFile.path))

        // A URL another serve wrote meanwhile is not this process's to remove.
        let second = try await ServerProcess.start(conninfo: "", environment: ["CREMA_DATA_DIR": data.path])
        let other = "https://127.0.0.1:9/\n"
        try Data(other.utf8).write(to: urlFile)
        second.stop()
        #expect(try String(contentsOf: urlFile, encoding: .utf8) == other)
    }
}
