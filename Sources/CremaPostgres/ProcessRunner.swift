import Foundation

/// Runs a program to completion without blocking a thread: the exit is awaited through the
/// termination handler, so callers on the cooperative pool never park on `waitUntilExit`.
/// Output goes to a temporary file rather than a pipe: `pg_ctl start` leaves a postmaster running that
/// inherits the child's descriptors, and a pipe would then never reach end-of-file.
enum ProcessRunner {
    struct Output: Sendable {
        var status: Int32
        var text: String
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> Output {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("crema-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Output(status: status, text: text)
    }
}
