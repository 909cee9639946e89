import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program to completion without blocking the cooperative pool: `waitpid` runs on a thread of its
/// own. Spawned with `posix_spawn`, closing every descriptor above stderr in the child: `pg_ctl start`
/// leaves a postmaster running that inherits the child's descriptors, and Foundation's `Process` never
/// notices the exit when a grandchild holds one of them. Output goes to a temporary file, not a pipe, for
/// the same reason.
enum ProcessRunner {
    struct Output: Sendable {
        var status: Int32
        var text: String
    }

    struct SpawnFailed: Error, CustomStringConvertible {
        var executable: String
        var errno: Int32
        var description: String { "could not start \(executable): \(String(cString: strerror(errno)))" }
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> Output {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("crema-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for fd in openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }

        // crema ignores SIGPIPE (a closed log pipe must not kill it); an ignored signal stays ignored across exec, so the
        // tools get the default back.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw SpawnFailed(executable: executable, errno: spawned) }

        let child = pid
        let status: Int32 = await withCheckedContinuation { continuation in
            let waiter = Thread {
                var raw: Int32 = 0
                while waitpid(child, &raw, 0) == -1, errno == EINTR {}
                // WIFEXITED / WEXITSTATUS, spelled out: the macros are not imported into Swift.
                let exited = raw & 0x7f == 0
                continuation.resume(returning: exited ? (raw >> 8) & 0xff : 128 + (raw & 0x7f))
            }
            waiter.start()
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Output(status: status, text: text)
    }

    /// This process's open descriptors (Linux), so the child can be spawned without any of them.
    private static func openDescriptors() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        // The listing itself used a descriptor that is closed again by now; fcntl filters it out.
        return names.compactMap(Int32.init).filter { fcntl($0, F_GETFD) != -1 }
    }
}
