extension PostgresListener {
    /// The pending events of one `events()` stream, and the consumer waiting for the next one.
    ///
    /// Bounded: when a push finds it full, the whole backlog is replaced by `.reconnected` followed by the new
    /// event. Every dropped notification was committed before the consumer will see that `.reconnected`, so
    /// the catch-up query it triggers covers them: the consumer loses no work, only the detail of which
    /// notifications there were.
    struct Inbox {
        typealias Waiter = (id: Int, continuation: CheckedContinuation<PostgresListenerEvent?, Never>)

        let capacity: Int
        private var events: [PostgresListenerEvent] = []
        private var head = 0
        /// Consumers waiting in `next()`; only ever non-empty while `events` is empty.
        var waiters: [Waiter] = []

        init(capacity: Int) {
            self.capacity = max(2, capacity)
        }

        var isEmpty: Bool { head == events.count }

        /// Hands `event` to a waiting consumer (returned, to resume outside the lock) or buffers it.
        mutating func deliver(_ event: PostgresListenerEvent) -> Waiter? {
            if !waiters.isEmpty { return waiters.removeFirst() }
            // Two catch-ups in a row are one: nothing can arrive between them.
            if event == .reconnected, !isEmpty, events.last == .reconnected { return nil }
            if events.count - head >= capacity {
                events = event == .reconnected ? [.reconnected] : [.reconnected, event]
                head = 0
                return nil
            }
            events.append(event)
            return nil
        }

        mutating func pop() -> PostgresListenerEvent? {
            guard !isEmpty else { return nil }
            let event = events[head]
            head += 1
            if head == events.count {
                events.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
            return event
        }
    }
}
