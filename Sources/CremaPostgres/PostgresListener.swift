import CLibPQ
import Foundation
public import Logging

/// LISTENs on channels over a dedicated connection (not from the pool) and fans notifications out to every
/// `events()` stream. The waiting loop runs on a thread of its own (`poll` on the libpq socket), never on
/// Swift's cooperative pool; it reconnects with capped backoff and re-LISTENs by itself.
public final class PostgresListener: @unchecked Sendable {
    // `subscribers`, `connected` and `stopped` are guarded by `lock`; the libpq handle lives on the thread only.
    private let lock = NSLock()
    private var subscribers: [Int: AsyncStream<PostgresListenerEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var connected = false
    private var stopped = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    private let conninfo: String
    private let channels: [String]
    private let logger: Logger
    private let reconnectDelay: Duration
    /// Notifications a slow consumer may fall behind by before it is told to catch up instead.
    public static let bufferSize = 10_000

    public init(conninfo: String, channels: [String], logger: Logger, reconnectDelay: Duration = .milliseconds(500)) {
        self.conninfo = conninfo
        self.channels = channels
        self.logger = logger
        self.reconnectDelay = reconnectDelay
    }

    /// Every notification from now on. The first event is `.reconnected` once LISTEN is in place (at once when
    /// it already is), and again after every reconnection or overflow.
    public func events() -> AsyncStream<PostgresListenerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PostgresListenerEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
        lock.lock()
        let id = nextSubscriber
        nextSubscriber += 1
        if stopped {
            lock.unlock()
            continuation.finish()
            return stream
        }
        subscribers[id] = continuation
        let alreadyListening = connected
        let needsThread = thread == nil
        if needsThread {
            let thread = Thread { [self] in loop() }
            thread.name = "crema.postgres.listener"
            self.thread = thread
            thread.start()
        }
        lock.unlock()
        if alreadyListening { continuation.yield(.reconnected) }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            lock.lock()
            subscribers.removeValue(forKey: id)
            lock.unlock()
        }
        return stream
    }

    /// Stops listening, closes the connection and finishes every stream.
    public func shutdown() async {
        let (wasRunning, current) = lock.withLock {
            let wasRunning = !stopped && thread != nil
            stopped = true
            defer { subscribers = [:] }
            return (wasRunning, subscribers)
        }
        for continuation in current.values { continuation.finish() }
        if wasRunning {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    self.finished.wait()
                    done.resume()
                }
            }
        }
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func broadcast(_ event: PostgresListenerEvent) {
        lock.lock()
        let current = Array(subscribers.values)
        lock.unlock()
        for continuation in current {
            if case .dropped = continuation.yield(event) {
                // The consumer fell behind and lost the oldest events: make sure it knows to catch up.
                continuation.yield(.reconnected)
            }
        }
    }

    private func setConnected(_ value: Bool) {
        lock.lock()
        connected = value
        lock.unlock()
    }

    // MARK: - The listening thread

    private func loop() {
        defer { finished.signal() }
        var failures = 0
        while !isStopped {
            switch PostgresConnection.openHandle(conninfo) {
            case .failure(let error):
                if failures == 0 { logger.warning("listener cannot connect; retrying", metadata: ["error": "\(error)"]) }
                failures += 1
                pause(attempt: failures)
            case .success(let handle):
                if let failure = listen(handle) {
                    PQfinish(handle)
                    if failures == 0 { logger.warning("listener cannot LISTEN; retrying", metadata: ["error": "\(failure)"]) }
                    failures += 1
                    pause(attempt: failures)
                    continue
                }
                if failures > 0 { logger.info("listener connected again", metadata: ["channels": "\(channels)"]) }
                failures = 0
                setConnected(true)
                broadcast(.reconnected)
                let lost = receive(handle)
                setConnected(false)
                PQfinish(handle)
                if lost, !isStopped {
                    logger.warning("listener lost its connection; reconnecting")
                    failures = 1
                    pause(attempt: 1)
                }
            }
        }
    }

    private func listen(_ handle: OpaquePointer) -> String? {
        for channel in channels {
            guard let quoted = PQescapeIdentifier(handle, channel, channel.utf8.count) else { return "cannot quote \(channel)" }
            let sql = "LISTEN " + String(cString: quoted)
            PQfreemem(quoted)
            let result = PQexec(handle, sql)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { return String(cString: PQerrorMessage(handle)) }
        }
        return nil
    }

    /// Waits for notifications until stopped (false) or the connection is lost (true).
    private func receive(_ handle: OpaquePointer) -> Bool {
        let socket = PQsocket(handle)
        guard socket >= 0 else { return true }
        while !isStopped {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 250)
            if ready < 0 {
                if errno == EINTR { continue }
                return true
            }
            if ready == 0 { continue }
            guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else { return true }
            while let notify = PQnotifies(handle) {
                let channel = String(cString: notify.pointee.relname)
                let payload = notify.pointee.extra.map { String(cString: $0) } ?? ""
                let pid = notify.pointee.be_pid
                PQfreemem(notify)
                broadcast(.notification(channel: channel, payload: payload, backendPID: pid))
            }
            // Readable with nothing to read: the server closed the connection.
            if descriptor.revents & Int16(POLLHUP | POLLERR) != 0 { return true }
        }
        return false
    }

    /// Capped exponential backoff between connection attempts, cut short by shutdown.
    private func pause(attempt: Int) {
        let base = Double(reconnectDelay.components.seconds) + Double(reconnectDelay.components.attoseconds) / 1e18
        let seconds = min(base * pow(2, Double(min(attempt - 1, 6))), 10)
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !isStopped { Thread.sleep(forTimeInterval: min(0.1, seconds)) }
    }
}
