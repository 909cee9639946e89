import Foundation

/// `.crema/apns-sim/url`, where scripts and the README find the built-in simulator of the serve that owns the
/// checkout's private cluster. Every serve used to write it at start, so one on a shared database, or one that then
/// failed on a busy port, left it pointing at a simulator nobody listens on. Now only a serve on the embedded cluster
/// writes it, once it is listening, and takes it away at exit only if it still holds this process's URL (a newer
/// serve's is left alone).
public struct SimulatorURLFile: Sendable {
    let file: URL
    let contents: String

    init(directory: URL, url: URL) {
        file = directory.appendingPathComponent("apns-sim").appendingPathComponent("url")
        contents = url.absoluteString + "\n"
    }

    public func publish() {
        try? Data(contents.utf8).write(to: file, options: .atomic)
    }

    public func withdraw() {
        guard (try? String(contentsOf: file, encoding: .utf8)) == contents else { return }
        try? FileManager.default.removeItem(at: file)
    }
}
