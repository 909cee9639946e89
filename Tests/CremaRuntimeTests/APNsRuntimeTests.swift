import CremaAPNsSimulator
import CremaClock
import CremaRuntime
import CremaSettings
import Foundation
import Logging
import Testing

/// Where a process's pushes go when no Apple key is configured: a built-in simulator that only the serve owning the
/// private cluster advertises, in `apns-sim/url`, and takes back only while the file is still its own.
@Suite(.timeLimit(.minutes(2))) struct APNsRuntimeTests {
    static func folder() -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("crema-runtime-\(UUID().uuidString.prefix(8))") }

    static func withSimulator(_ body: (APNsRuntime, URL) async throws -> Void) async throws {
        let data = folder()
        var logger = Logger(label: "crema.runtime.tests")
        logger.logLevel = .critical
        let runtime = try await APNsRuntime.start(.simulator(bundleID: "cafe.crema.test"), dataDirectory: data, clock: .system, logger: logger)
        do {
            try await body(runtime, data)
        } catch {
            try? await runtime.service.close()
            try? FileManager.default.removeItem(at: data)
            throw error
        }
        try await runtime.service.close()
        try? FileManager.default.removeItem(at: data)
    }

    @Test("with no key the simulator is used, and only a private database is told where it is")
    func withNoKeyTheSimulatorIsUsedAndOnlyAPrivateDatabaseIsToldWhereItIs() async throws {
        try await Self.withSimulator { runtime, data in
            let simulator = try #require(runtime.simulator)
            #expect(runtime.summary(privateDatabase: true).contains(simulator.baseURL.absoluteString))
            #expect(runtime.summary(privateDatabase: false).contains("sends no pushes"))
            #expect(runtime.simulatorURLFile(dataDirectory: data, privateDatabase: false) == nil)
            let file = data.appendingPathComponent("apns-sim/url")
            let published = try #require(runtime.simulatorURLFile(dataDirectory: data, privateDatabase: true))
            published.publish()
            #expect(try String(contentsOf: file, encoding: .utf8) == simulator.baseURL.absoluteString + "\n")
            published.withdraw()
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }

    @Test("a serve takes back the simulator's address only while it is still its own")
    func aServeTakesBackTheSimulatorsAddressOnlyWhileItIsStillItsOwn() async throws {
        try await Self.withSimulator { runtime, data in
            let file = data.appendingPathComponent("apns-sim/url")
            let mine = try #require(runtime.simulatorURLFile(dataDirectory: data, privateDatabase: true))
            mine.publish()
            let newer = "https://127.0.0.1:1/\n"
            try Data(newer.utf8).write(to: file)
            mine.withdraw()
            #expect(try String(contentsOf: file, encoding: .utf8) == newer, "a newer serve's address is left alone")
        }
    }
}
