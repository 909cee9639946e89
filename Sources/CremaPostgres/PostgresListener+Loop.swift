import CLibPQ
import Foundation
import Logging
import Synchronization

// Everything here runs on the listener's own thread, which alone touches the libpq connection.
extension PostgresListener {
    /// Why the wait on one connection ended.
    private enum Ending {
        case shutdown
        case lost(String)
    }

    /// Connects, listens and waits, reconnecting until shutdown; then ends every stream. The steps are the
    /// state machine's; this performs them.
    func runLoop() {
        var machine = PostgresListenerStateMachine(reconnectDelay: reconnectDelay, maxReconnectDelay: Self.maxReconnectDelay)
        var handle: OpaquePointer?
        var action = machine.start()
        while true {
            // Shutdown is noticed between steps; a connection attempt or LISTEN under way ends first.
            if action != .finish, isShuttingDown { action = machine.shutdownRequested() }
            switch action {
            case .connect:
                switch connect() {
                case .success(let connection):
                    handle = connection
                    action = machine.connected()
                case .failure(let failure):
                    action = machine.connectFailed(failure.description)
                }
            case .listen:
                guard let connection = handle else { preconditionFailure("LISTEN without a connection") }
                if let failure = listen(on: connection) {
                    PQfinish(connection)
                    handle = nil
                    action = machine.listenFailed(failure.description)
                } else {
                    action = machine.listened(at: .now)
                }
            case .deliverReconnected(let outage):
                guard let connection = handle else { preconditionFailure("listening without a connection") }
                logListening(after: outage)
                // Notifications that arrived while LISTEN ran are already read: they follow `.reconnected`.
                deliver([.reconnected] + Self.drainNotifications(connection))
                let ending = wait(on: connection)
                state.withLock { $0.isListening = false }
                PQfinish(connection)
                handle = nil
                switch ending {
                case .shutdown: action = machine.shutdownRequested()
                case .lost(let detail): action = machine.lost(detail, at: .now)
                }
            case .wait(let delay, let warning):
                if let warning { log(warning) }
                // ±10 % so that processes which lost the same server do not all return in step.
                pause(for: delay * Double.random(in: 0.9...1.1))
                action = machine.waited()
            case .finish:
                if let handle { PQfinish(handle) }
                finish()
                return
            }
        }
    }

    private var isShuttingDown: Bool { state.withLock { $0.isShuttingDown } }

    private func logListening(after outage: PostgresListenerStateMachine.Outage?) {
        guard let outage else {
            logger.info("listening", metadata: ["postgres.channels": "\(channels)"])
            return
        }
        logger.info(
            "listening again",
            metadata: [
                "postgres.channels": "\(channels)", "postgres.attempts": "\(outage.attempts)",
                "postgres.outage_ms": "\(outage.duration.milliseconds)",
            ])
    }

    private func log(_ warning: PostgresListenerStateMachine.Warning) {
        switch warning {
        case .firstFailure(let detail):
            logger.warning(
                "cannot connect the LISTEN connection; retrying",
                metadata: ["postgres.channels": "\(channels)", "postgres.error": "\(Self.oneLine(detail))"])
        case .lost(let detail):
            logger.warning(
                "lost the LISTEN connection; reconnecting",
                metadata: ["postgres.channels": "\(channels)", "postgres.error": "\(Self.oneLine(detail))"])
        }
    }

    /// Sleeps for `duration` unless shutdown wakes the thread first.
    private func pause(for duration: Duration) {
        let deadline = ContinuousClock.now + duration
        while !isShuttingDown {
            let left = deadline - .now
            guard left > .zero else { return }
            var descriptor = pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: max(1, min(left.milliseconds, Int64(Self.pollTimeoutMilliseconds))))
            if poll(&descriptor, 1, milliseconds) > 0 { drainWakePipe() }
        }
    }

    // MARK: - libpq

    /// Opens the connection, or says why it could not.
    private func connect() -> Result<OpaquePointer, ListenFailure> {
        guard let handle = PostgresConnection.connectHandle(conninfo, applicationName: "crema-listener") else {
            return .failure(ListenFailure("out of memory"))
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let detail = PostgresConnection.message(handle)
            PQfinish(handle)
            return .failure(ListenFailure(detail))
        }
        // Server messages outside a query (such as the FATAL before a terminated backend closes) go to the
        // log at debug rather than to stderr; the loss itself is logged at warning. The listener outlives the
        // handle (the thread holds it), so the unretained pointer stays valid.
        PQsetNoticeProcessor(
            handle,
            { context, message in
                guard let context, let message else { return }
                let listener = Unmanaged<PostgresListener>.fromOpaque(context).takeUnretainedValue()
                let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
                listener.logger.debug("server notice on the LISTEN connection", metadata: ["postgres.notice": "\(text)"])
            }, Unmanaged.passUnretained(self).toOpaque())
        return .success(handle)
    }

    /// Runs `LISTEN` for every channel on `handle`; nil when it is in place, or why it is not (the caller
    /// closes the connection).
    private func listen(on handle: OpaquePointer) -> ListenFailure? {
        var statements: [String] = []
        for channel in channels {
            guard let quoted = PQescapeIdentifier(handle, channel, channel.utf8.count) else {
                return ListenFailure(PostgresConnection.message(handle))
            }
            statements.append("LISTEN \(String(cString: quoted))")
            PQfreemem(quoted)
        }
        // A server-side idle_session_timeout (PostgreSQL 14+) would end this always-idle session. It goes last
        // so that pg_stat_activity shows the session's query as `LISTEN …`.
        if PQserverVersion(handle) >= 140_000 { statements.append("SET idle_session_timeout TO 0") }
        let result = PQexec(handle, statements.joined(separator: "; "))
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
            let detail = result.flatMap { PQresultErrorMessage($0).map { String(cString: $0) } } ?? PostgresConnection.message(handle)
            return ListenFailure(detail.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return nil
    }

    /// Waits for notifications on `handle` until the connection is lost or shutdown is asked for.
    private func wait(on handle: OpaquePointer) -> Ending {
        while true {
            if isShuttingDown { return .shutdown }
            let socket = PQsocket(handle)
            guard socket >= 0 else { return .lost("the connection has no socket") }
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, nfds_t(descriptors.count), Self.pollTimeoutMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .lost("poll failed: \(String(cString: strerror(errno)))")
            }
            if descriptors[1].revents != 0 { drainWakePipe() }
            if descriptors[0].revents & Int16(POLLNVAL) != 0 { return .lost("the socket was closed") }
            // Readable, end-of-file and socket errors all show up in revents; PQconsumeInput tells them apart.
            if descriptors[0].revents != 0 {
                if PQconsumeInput(handle) == 0 { return .lost(PostgresConnection.message(handle)) }
                deliver(Self.drainNotifications(handle))
            }
            // A terminated backend sends a FATAL error before closing; the status turns bad either way.
            if PQstatus(handle) != CONNECTION_OK { return .lost(PostgresConnection.message(handle)) }
        }
    }

    private static func drainNotifications(_ handle: OpaquePointer) -> [PostgresListenerEvent] {
        var events: [PostgresListenerEvent] = []
        while let notify = PQnotifies(handle) {
            let channel = String(cString: notify.pointee.relname)
            let payload = notify.pointee.extra.map { String(cString: $0) } ?? ""
            events.append(.notification(channel: channel, payload: payload, backendPID: notify.pointee.be_pid))
            PQfreemem(notify)
        }
        return events
    }

    /// libpq's messages span lines ("server closed the connection unexpectedly\n\tThis probably means …").
    private static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeReader, &buffer, buffer.count) > 0 {}
    }

    /// Ends the streams (each keeps its buffered events) and releases `shutdown()`.
    private func finish() {
        let (waiters, shutdownWaiters) = state.withLock { state in
            state.isFinished = true
            state.isListening = false
            if wakeReader >= 0 { close(wakeReader) }
            if wakeWriter >= 0 { close(wakeWriter) }
            var waiters: [Inbox.Waiter] = []
            for id in state.inboxes.keys {
                waiters += state.inboxes[id]?.waiters ?? []
                state.inboxes[id]?.waiters = []
            }
            let shutdownWaiters = state.shutdownWaiters
            state.shutdownWaiters = []
            return (waiters, shutdownWaiters)
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
        for continuation in shutdownWaiters { continuation.resume() }
        logger.debug("stopped listening", metadata: ["postgres.channels": "\(channels)"])
    }
}

/// Why a connection attempt failed: libpq's or the server's message, for the log.
struct ListenFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}

extension Duration {
    fileprivate var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
