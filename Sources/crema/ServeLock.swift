import CremaRuntime
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The private cluster's one `crema serve`: `<data dir>/serve.pid` holds its pid while it runs. A second serve on the
/// same folder is refused (it would share the cluster and the simulator, and its Ctrl-C would stop the cluster under
/// the first); a file whose process is gone was left by a run that crashed, and is taken over.
struct ServeLock {
    let file: URL

    /// What the lock file said before this process took it.
    enum Previous: Equatable {
        case none
        /// A run that ended without removing its file (a crash, a closed terminal, `kill -9`).
        case crashed(pid: Int32)
    }

    /// Takes the lock in `directory`, or throws naming the serve that holds it.
    static func acquire(in directory: URL) throws -> (ServeLock, Previous) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("serve.pid")
        var previous = Previous.none
        for _ in 0..<2 {
            let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            if descriptor >= 0 {
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                try handle.write(contentsOf: Data("\(getpid())\n".utf8))
                return (ServeLock(file: file), previous)
            }
            let text = (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            if let pid = Int32(text), isCremaServe(pid) {
                throw StartupError(
                    message: "another crema serve (pid \(pid)) is using the private cluster in \(directory.path): stop it first "
                        + "(Ctrl-C in its terminal, or kill \(pid)), or give this one its own folder with CREMA_DATA_DIR=…")
            }
            previous = Int32(text).map { .crashed(pid: $0) } ?? .none
            try? FileManager.default.removeItem(at: file)
        }
        throw StartupError(message: "cannot take \(file.path): another crema serve is starting in \(directory.path)")
    }

    /// Whether `pid` is a running `crema serve` (not only any process that reused the number).
    static func isCremaServe(_ pid: Int32) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return true }
        let words = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return words.contains { $0.hasSuffix("crema") } && words.contains("serve")
    }

    /// Removes the file if it is still this process's.
    func release() {
        let text = (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if text == "\(getpid())" { try? FileManager.default.removeItem(at: file) }
    }
}
