import Foundation
public import Logging
import Synchronization

/// A dedicated libpq connection (not from the pool) that `LISTEN`s on some channels and delivers what
/// arrives as an `AsyncSequence`, reconnecting and re-listening whenever the connection is lost.
///
/// The connection lives on a thread of its own, which blocks in `poll()` on the socket; Swift's cooperative
/// pool never waits for libpq. The listener starts connecting when it is created and runs until
/// ``shutdown()``, which every owner must call (the thread keeps the listener alive until then).
///
/// PostgreSQL keeps no notification for a session that is not listening. So consumers treat notifications as
/// hints and answer every ``PostgresListenerEvent/reconnected`` with a catch-up query: it is delivered once
/// `LISTEN` is in place after each (re)connection, and when a slow consumer's backlog overflowed.
public final class PostgresListener: Sendable {
    /// Events one stream holds for a consumer that is not keeping up, before its backlog collapses into
    /// a `.reconnected`.
    public static let defaultBufferSize = 10_000
    /// Reconnection attempts back off exponentially from `reconnectDelay` up to this. A failover makes the primary
    /// unreachable for about 10 s (docs/reliability.md, "Failover"); with a 30 s cap the listener came back up to 5.6 s
    /// after writes did, and 5 s keeps that gap to one attempt while costing a dead server one connection attempt
    /// every 5 s.
    static let maxReconnectDelay = Duration.seconds(5)
    /// The longest the thread waits in `poll()` before looking at the shutdown flag again (the wake-up pipe
    /// normally interrupts it sooner).
    static let pollTimeoutMilliseconds: Int32 = 1000

    let conninfo: String
    let channels: [String]
    let logger: Logger
    let reconnectDelay: Duration
    let bufferSize: Int
    let state = Mutex(State())
    /// A pipe whose write end ``shutdown()`` writes to, so the thread leaves `poll()` at once. -1 if `pipe()`
    /// failed, in which case shutdown is noticed at the next poll timeout.
    let wakeReader: Int32
    let wakeWriter: Int32

    struct State: ~Copyable {
        var inboxes: [Int: Inbox] = [:]
        var nextID = 0
        /// True between a successful `LISTEN` and the loss of that connection.
        var isListening = false
        var isShuttingDown = false
        /// Set by the thread as it exits, after closing the connection and the pipe.
        var isFinished = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Creates the listener and starts connecting on its own thread.
    /// - Parameters:
    ///   - conninfo: A libpq conninfo string or URI ("" uses the `PG*` variables).
    ///   - channels: Channel names, used as given (case and all): each is quoted as an identifier. Each must
    ///     be 1–63 bytes of UTF-8 without NUL, since PostgreSQL would silently truncate a longer name.
    ///   - logger: Receives state changes (connected, lost, reconnected), not every attempt.
    ///   - reconnectDelay: The wait before the first reconnection attempt; later attempts double it, up to 30 s.
    ///   - bufferSize: How many events one stream holds for a slow consumer (at least 2).
    public init(
        conninfo: String, channels: [String], logger: Logger, reconnectDelay: Duration = .milliseconds(500),
        bufferSize: Int = PostgresListener.defaultBufferSize
    ) {
        for channel in channels {
            precondition(
                !channel.isEmpty && channel.utf8.count <= 63 && !channel.utf8.contains(0),
                "a LISTEN channel name must be 1-63 bytes without NUL")
        }
        self.conninfo = conninfo
        self.channels = channels
        self.logger = logger
        self.reconnectDelay = max(reconnectDelay, .milliseconds(1))
        self.bufferSize = bufferSize
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        } else {
            fds = [-1, -1]
        }
        wakeReader = fds[0]
        wakeWriter = fds[1]
        let thread = Thread { [self] in
            nameCurrentThread("crema-pg-listen")
            runLoop()
        }
        thread.start()
    }

    /// A stream of every event from now on. Each call makes an independent stream that receives all events
    /// (fan-out), with its own buffer of `bufferSize`. A stream's first event is always `.reconnected`: at once
    /// if the listener is listening, otherwise when it is. Iterate each stream from one task at a time.
    ///
    /// The stream ends after ``shutdown()`` (once its buffered events are read) or when the iterating task is
    /// cancelled. A stream that is dropped unsubscribes itself.
    public func events() -> AsyncStream<PostgresListenerEvent> {
        let id: Int? = state.withLock { state in
            guard !state.isShuttingDown else { return nil }
            let id = state.nextID
            state.nextID += 1
            var inbox = Inbox(capacity: bufferSize)
            if state.isListening { _ = inbox.deliver(.reconnected) }
            state.inboxes[id] = inbox
            return id
        }
        guard let id else { return AsyncStream(unfolding: { nil }) }
        let subscription = Subscription(listener: self, id: id)
        return AsyncStream(
            unfolding: { await subscription.listener.next(for: subscription.id) },
            onCancel: { subscription.listener.unsubscribe(subscription.id) })
    }

    /// Stops listening: the thread leaves its wait, closes the connection and exits, and every stream ends
    /// after its buffered events. Returns once the connection is closed. If a connection attempt is under
    /// way, that attempt ends first (at most the connect timeout, 5 s by default).
    public func shutdown() async {
        let finished = state.withLock { state in
            state.isShuttingDown = true
            if !state.isFinished { wake() }
            return state.isFinished
        }
        if finished { return }
        await withCheckedContinuation { continuation in
            let finished = state.withLock { state in
                if !state.isFinished { state.shutdownWaiters.append(continuation) }
                return state.isFinished
            }
            if finished { continuation.resume() }
        }
    }

    // MARK: - Streams

    /// Ties a stream's lifetime to its inbox: when the stream (and with it this object) goes away, so does
    /// the inbox.
    private final class Subscription: Sendable {
        let listener: PostgresListener
        let id: Int

        init(listener: PostgresListener, id: Int) {
            self.listener = listener
            self.id = id
        }

        deinit { listener.unsubscribe(id) }
    }

    /// The next event for stream `id`, waiting for one if none is buffered; nil ends the stream.
    private func next(for id: Int) async -> PostgresListenerEvent? {
        let waiterID = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PostgresListenerEvent?, Never>) in
                let immediate: PostgresListenerEvent?? = state.withLock { state in
                    guard var inbox = state.inboxes[id] else { return .some(nil) }
                    if let event = inbox.pop() {
                        state.inboxes[id] = inbox
                        return .some(event)
                    }
                    if state.isFinished || Task.isCancelled {
                        state.inboxes[id] = nil
                        return .some(nil)
                    }
                    inbox.waiters.append((waiterID, continuation))
                    state.inboxes[id] = inbox
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Inbox.Waiter? in
                guard let inbox = state.inboxes[id], let index = inbox.waiters.firstIndex(where: { $0.id == waiterID })
                else { return nil }
                state.inboxes[id] = nil
                return inbox.waiters[index]
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    fileprivate func unsubscribe(_ id: Int) {
        let waiters = state.withLock { state in state.inboxes.removeValue(forKey: id)?.waiters ?? [] }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// Hands events to every stream, in order. Called by the thread; `.reconnected` also marks the
    /// listener as listening, so a stream created afterwards starts with its own `.reconnected`.
    func deliver(_ events: [PostgresListenerEvent]) {
        guard !events.isEmpty else { return }
        let resumes = state.withLock { state in
            var resumes: [(CheckedContinuation<PostgresListenerEvent?, Never>, PostgresListenerEvent)] = []
            if events.contains(.reconnected) { state.isListening = true }
            for id in state.inboxes.keys {
                for event in events {
                    if let waiter = state.inboxes[id]?.deliver(event) { resumes.append((waiter.continuation, event)) }
                }
            }
            return resumes
        }
        for (continuation, event) in resumes { continuation.resume(returning: event) }
    }

    /// Wakes the thread from `poll()`. Call with the state locked and the thread not finished, so the pipe
    /// is still open.
    private func wake() {
        guard wakeWriter >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }
}
