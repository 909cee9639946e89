import CEpoll
import Foundation
import Synchronization

/// One thread that waits in `epoll_wait` on the sockets of every pooled connection and tells a connection when its
/// socket can be read (or written, while a large statement is still being sent). Statements never block a thread:
/// a task sends without waiting and is resumed from here once its results are in, so one round trip costs one
/// wake-up of this thread and one resumption of the task (docs/decisions.md "A non-blocking driver").
final class PostgresEventLoop: Sendable {
    /// What a registered socket's owner does when it is ready; called on the loop's thread.
    protocol Handler: AnyObject, Sendable {
        func socketReady(readable: Bool, writable: Bool)
    }

    /// The process's loop, started on first use. One thread serves every pool: a round trip is a few microseconds
    /// of its time, and one thread keeps the wake-ups per event low on small machines.
    static let shared = PostgresEventLoop()

    /// Weak, so a connection dropped without `close()` is still freed (its `deinit` deregisters).
    private struct Registration {
        weak var handler: (any Handler)?
    }

    private struct Registrations: ~Copyable {
        var handlers: [UInt64: Registration] = [:]
        var next: UInt64 = 1
    }

    private let epoll: Int32
    private let registrations = Mutex(Registrations())

    private init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        let thread = Thread { [self] in
            nameCurrentThread("crema-pg-loop")
            run()
        }
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Starts watching `socket` for reading; returns the registration to pass to the other calls.
    func register(_ socket: Int32, handler: any Handler) -> UInt64 {
        let id = registrations.withLock { state in
            defer { state.next += 1 }
            state.handlers[state.next] = Registration(handler: handler)
            return state.next
        }
        var event = epoll_event(events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, data: epoll_data_t(u64: id))
        if epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) != 0 {
            _ = registrations.withLock { $0.handlers.removeValue(forKey: id) }
            return 0
        }
        return id
    }

    /// Asks to hear about writability too (a send did not fit in the socket buffer), or not any more.
    func watchWrites(_ socket: Int32, registration: UInt64, _ watch: Bool) {
        let mask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (watch ? EPOLLOUT.rawValue : 0)
        var event = epoll_event(events: mask, data: epoll_data_t(u64: registration))
        _ = epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event)
    }

    /// Stops watching; after it returns, an event already taken from the kernel finds no handler and is dropped.
    /// `stillOpen` false: libpq already closed the socket (the kernel dropped it from epoll), and its number may
    /// belong to another connection by now, so only the registration goes.
    func deregister(_ socket: Int32, registration: UInt64, stillOpen: Bool = true) {
        guard registration != 0 else { return }
        if stillOpen {
            var event = epoll_event()
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, socket, &event)
        }
        _ = registrations.withLock { $0.handlers.removeValue(forKey: registration) }
    }

    private func run() {
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while true {
            let count = epoll_wait(epoll, events, Int32(capacity), -1)
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: \(String(cString: strerror(errno)))")
            }
            for index in 0..<Int(count) {
                let event = events[index]
                let handler = registrations.withLock { $0.handlers[event.data.u64]?.handler }
                let flags = event.events
                let failed = flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0
                handler?.socketReady(readable: flags & EPOLLIN.rawValue != 0 || failed, writable: flags & EPOLLOUT.rawValue != 0)
            }
        }
    }
}

/// Gives the calling thread the name top, perf and /proc show. Foundation's `Thread.name` on Linux does not reach the
/// kernel for a thread that has not started, and from inside it races `start()`; the kernel keeps 15 bytes.
func nameCurrentThread(_ name: StaticString) {
    precondition(name.utf8CodeUnitCount <= 15, "the kernel would cut a thread name longer than 15 bytes")
    _ = crema_name_current_thread(UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self))
}
