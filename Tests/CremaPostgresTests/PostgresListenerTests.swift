import CremaPostgres
import CremaTestSupport
import Foundation
import InMemoryLogging
import Logging
import Testing

/// The LISTEN connection against a real server. Waits have a generous deadline and fail only when the
/// awaited event never comes; nothing passes or fails on timing.
@Suite(.timeLimit(.minutes(2))) struct PostgresListenerTests {
    @Test("a notification from another connection arrives with its channel and payload") func aNotificationFromAnotherConnectionArrivesWithItsChannelAndPayload() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let listener = PostgresListener(conninfo: db.conninfo, channels: ["orders"], logger: Logger(label: "test"))
            let recorder = EventRecorder(listener.events())
            try await recorder.waitFor { $0.first == .reconnected }
            let senderPID = try await db.notify("orders", "order 42 ready")
            let events = try await recorder.waitFor { $0.count >= 2 }
            #expect(events == [.reconnected, .notification(channel: "orders", payload: "order 42 ready", backendPID: senderPID)])
            await listener.shutdown()
        }
    }

    @Test("several notifications arrive in the order they were sent") func severalNotificationsArriveInTheOrderTheyWereSent() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let listener = PostgresListener(conninfo: db.conninfo, channels: ["a", "b"], logger: Logger(label: "test"))
            let recorder = EventRecorder(listener.events())
            try await recorder.waitFor { $0.contains(.reconnected) }
            for i in 0..<20 { _ = try await db.notify(i.isMultiple(of: 2) ? "a" : "b", "\(i)") }
            // One transaction: delivered together at commit, still in order.
            _ = try await db.pool.withTransaction { connection in
                for i in 20..<30 { try await connection.query("SELECT pg_notify(\("a"), \("\(i)"))") }
            }
            let events = try await recorder.waitFor { $0.notifications.count >= 30 }
            #expect(events.notifications.map(\.payload) == (0..<30).map { "\($0)" })
            #expect(events.notifications.prefix(20).map(\.channel) == (0..<20).map { $0.isMultiple(of: 2) ? "a" : "b" })
            await listener.shutdown()
        }
    }

    @Test("a channel name that needs quoting is listened to as given") func aChannelNameThatNeedsQuotingIsListenedToAsGiven() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let channels = [#"Order "Events"; DROP TABLE x"#, "café ☕️", "UPPER"]
            let listener = PostgresListener(conninfo: db.conninfo, channels: channels, logger: Logger(label: "test"))
            let recorder = EventRecorder(listener.events())
            try await recorder.waitFor { $0.contains(.reconnected) }
            for channel in channels { _ = try await db.notify(channel, "for \(channel)") }
            // Not listened to: an unquoted LISTEN UPPER would have folded the name to lower case.
            _ = try await db.notify("upper", "not listened")
            _ = try await db.notify(channels[0], "last")
            let events = try await recorder.waitFor { $0.notifications.contains { $0.payload == "last" } }
            #expect(events.notifications.map(\.channel) == channels + [channels[0]])
            #expect(events.notifications.map(\.payload) == channels.map { "for \($0)" } + ["last"])
            await listener.shutdown()
        }
    }

    @Test("after its backend is terminated the listener reconnects and receives again") func afterItsBackendIsTerminatedTheListenerReconnectsAndReceivesAgain() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let handler = InMemoryLogHandler()
            let logger = Logger(label: "test") { _ in handler }
            let listener = PostgresListener(
                conninfo: db.conninfo, channels: ["orders"], logger: logger, reconnectDelay: .milliseconds(50))
            let recorder = EventRecorder(listener.events())
            try await recorder.waitFor { $0.contains(.reconnected) }
            let first = try await db.listenerPID()
            #expect(try await db.scalar("SELECT pg_terminate_backend(\(first))", as: Bool.self))

            let events = try await recorder.waitFor { $0.filter { $0 == .reconnected }.count >= 2 }
            #expect(events == [.reconnected, .reconnected])
            // A new backend listens in place of the terminated one.
            _ = try await db.listenerPID(otherThan: first)
            _ = try await db.notify("orders", "after the reconnect")
            let after = try await recorder.waitFor { $0.count >= 3 }
            #expect(after.notifications.map(\.payload) == ["after the reconnect"])
            // One warning for the loss, not one per attempt.
            #expect(handler.entries.filter { $0.level == .warning }.map(\.message.description) == ["lost the LISTEN connection; reconnecting"])
            await listener.shutdown()
        }
    }

    @Test("a listener started before its database exists listens once it does") func aListenerStartedBeforeItsDatabaseExistsListensOnceItDoes() async throws {
        let server = try TestDatabase.serverConninfo()
        let name = "t_listener_late_\(UUID().uuidString.prefix(8).lowercased())"
        let listener = PostgresListener(
            conninfo: "\(server) dbname=\(name)", channels: ["orders"], logger: Logger(label: "test"),
            reconnectDelay: .milliseconds(20))
        let recorder = EventRecorder(listener.events())
        let admin = try await TestDatabase.adminConnection()
        try await admin.simpleQuery("CREATE DATABASE \(name)")
        try await recorder.waitFor { $0.contains(.reconnected) }
        let sender = try await PostgresConnection.connect("\(server) dbname=\(name)")
        try await sender.query("SELECT pg_notify(\("orders"), \("hello"))")
        let events = try await recorder.waitFor { $0.count >= 2 }
        #expect(events.first == .reconnected)
        #expect(events.notifications.map(\.payload) == ["hello"])
        await sender.close()
        await listener.shutdown()
        try await admin.simpleQuery("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        await admin.close()
    }

    @Test("every stream gets every event and a late stream starts with reconnected") func everyStreamGetsEveryEventAndALateStreamStartsWithReconnected() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let listener = PostgresListener(conninfo: db.conninfo, channels: ["orders"], logger: Logger(label: "test"))
            let early = EventRecorder(listener.events())
            try await early.waitFor { $0.contains(.reconnected) }
            let late = EventRecorder(listener.events())
            try await late.waitFor { $0.contains(.reconnected) }
            _ = try await db.notify("orders", "both")
            let seenEarly = try await early.waitFor { $0.count >= 2 }
            let seenLate = try await late.waitFor { $0.count >= 2 }
            #expect(seenEarly == seenLate)
            #expect(seenLate.notifications.map(\.payload) == ["both"])
            await listener.shutdown()
        }
    }

    @Test("a consumer that falls behind gets reconnected in place of its dropped backlog") func aConsumerThatFallsBehindGetsReconnectedInPlaceOfItsDroppedBacklog() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let listener = PostgresListener(
                conninfo: db.conninfo, channels: ["orders"], logger: Logger(label: "test"), bufferSize: 4)
            // The slow stream is not read until the fast one has seen the last notification; by then the
            // listener has handed every notification to both.
            let slow = listener.events()
            let fast = EventRecorder(listener.events())
            try await fast.waitFor { $0.contains(.reconnected) }
            _ = try await db.pool.withTransaction { connection in
                for i in 0..<50 { try await connection.query("SELECT pg_notify(\("orders"), \("\(i)"))") }
            }
            _ = try await db.notify("orders", "last")
            try await fast.waitFor { $0.notifications.last?.payload == "last" }

            var received: [PostgresListenerEvent] = []
            for await event in slow {
                received.append(event)
                if case .notification(_, "last", _) = event { break }
            }
            // Each time the buffer of 4 was full, its backlog became one `.reconnected` plus the newest
            // notification (after 3, 6, ..., 48); what is left is the last catch-up signal and what followed it.
            #expect(received.first == .reconnected)
            #expect(received.count == 4)
            #expect(received.notifications.map(\.payload) == ["48", "49", "last"])
            await listener.shutdown()
        }
    }

    @Test("shutdown finishes every stream") func shutdownFinishesEveryStream() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let listener = PostgresListener(conninfo: db.conninfo, channels: ["orders"], logger: Logger(label: "test"))
            let stream = listener.events()
            let consumer = Task {
                var count = 0
                for await _ in stream { count += 1 }
                return count
            }
            let recorder = EventRecorder(listener.events())
            try await recorder.waitFor { $0.contains(.reconnected) }
            await listener.shutdown()
            #expect(await consumer.value >= 1)
            try await recorder.waitUntilFinished()
            // The connection is gone, and a stream asked for afterwards ends at once.
            _ = try await eventually {
                let listening = try await db.scalar(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'", as: Int.self)
                return listening == 0 ? true : nil
            }
            var afterwards = listener.events().makeAsyncIterator()
            #expect(await afterwards.next() == nil)
            await listener.shutdown()  // a second call returns at once
        }
    }

    @Test("cancelling the consuming task ends its stream only") func cancellingTheConsumingTaskEndsItsStreamOnly() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let listener = PostgresListener(conninfo: db.conninfo, channels: ["orders"], logger: Logger(label: "test"))
            let cancelled = listener.events()
            let consumer = Task {
                var events: [PostgresListenerEvent] = []
                for await event in cancelled { events.append(event) }
                return events
            }
            let recorder = EventRecorder(listener.events())
            try await recorder.waitFor { $0.contains(.reconnected) }
            consumer.cancel()
            _ = await consumer.value
            _ = try await db.notify("orders", "still here")
            try await recorder.waitFor { $0.notifications.map(\.payload) == ["still here"] }
            await listener.shutdown()
        }
    }
}

// MARK: - Helpers

extension TestDatabase {
    /// Sends a notification from a pooled connection; returns that connection's backend pid.
    fileprivate func notify(_ channel: String, _ payload: String) async throws -> Int32 {
        try await pool.withConnection { connection in
            let rows = try await connection.query("SELECT pg_notify(\(channel), \(payload)), pg_backend_pid()")
            return Int32(try rows[0].decode(at: 1, as: Int.self))
        }
    }

    /// The backend pid of this database's listener, waiting for one (other than `excluded`) to be listening.
    fileprivate func listenerPID(otherThan excluded: Int = 0) async throws -> Int {
        try await eventually {
            let rows = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> \(excluded)
                    """)
            }
            return try rows.first?.decode(at: 0, as: Int.self)
        }
    }
}

extension [PostgresListenerEvent] {
    fileprivate var notifications: [(channel: String, payload: String)] {
        compactMap { event in
            guard case .notification(let channel, let payload, _) = event else { return nil }
            return (channel, payload)
        }
    }
}

private struct NeverHappened: Error, CustomStringConvertible {
    var description: String
}

/// Polls `body` until it returns a value; fails after a generous deadline.
private func eventually<T>(
    within deadline: Duration = .seconds(30), _ body: () async throws -> T?
) async throws -> T {
    let end = ContinuousClock.now + deadline
    while true {
        if let value = try await body() { return value }
        guard ContinuousClock.now < end else { throw NeverHappened(description: "not within \(deadline)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Reads a stream on a task of its own and keeps what it saw. A wait resumes on the event that satisfies it (no
/// polling); one the stream can no longer satisfy fails when the stream ends, and the suite's time limit bounds the rest.
private actor EventRecorder {
    private(set) var events: [PostgresListenerEvent] = []
    private(set) var isFinished = false
    private var reader: Task<Void, Never>?
    private var waiters: [UUID: Waiter] = [:]

    /// A wait for `condition` (nil: for the end of the stream).
    private struct Waiter {
        var condition: (@Sendable ([PostgresListenerEvent]) -> Bool)?
        var continuation: CheckedContinuation<[PostgresListenerEvent], any Error>
    }

    init(_ stream: AsyncStream<PostgresListenerEvent>) {
        Task { await self.start(stream) }
    }

    private func start(_ stream: AsyncStream<PostgresListenerEvent>) {
        reader = Task {
            for await event in stream { self.append(event) }
            self.markFinished()
        }
    }

    private func append(_ event: PostgresListenerEvent) {
        events.append(event)
        settle()
    }

    private func markFinished() {
        isFinished = true
        settle()
    }

    /// Resumes every wait that is satisfied, or that can no longer be because the stream ended.
    private func settle() {
        for (id, waiter) in waiters {
            if let condition = waiter.condition {
                if condition(events) {
                    waiter.continuation.resume(returning: events)
                } else if isFinished {
                    waiter.continuation.resume(throwing: NeverHappened(description: "the stream ended first; it saw \(events)"))
                } else {
                    continue
                }
            } else if isFinished {
                waiter.continuation.resume(returning: events)
            } else {
                continue
            }
            waiters[id] = nil
        }
    }

    private func wait(_ id: UUID, for condition: (@Sendable ([PostgresListenerEvent]) -> Bool)?) async throws -> [PostgresListenerEvent] {
        try await withCheckedThrowingContinuation { continuation in
            // Cancelled before it was registered: the cancellation handler found nothing to abandon.
            guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
            waiters[id] = Waiter(condition: condition, continuation: continuation)
            settle()
        }
    }

    private func abandon(_ id: UUID) {
        waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }

    /// Waits until the events seen so far satisfy `condition`, and returns them.
    @discardableResult
    nonisolated func waitFor(_ condition: @escaping @Sendable ([PostgresListenerEvent]) -> Bool) async throws -> [PostgresListenerEvent] {
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await wait(id, for: condition)
        } onCancel: {
            Task { await self.abandon(id) }
        }
    }

    nonisolated func waitUntilFinished() async throws {
        let id = UUID()
        _ = try await withTaskCancellationHandler {
            try await wait(id, for: nil)
        } onCancel: {
            Task { await self.abandon(id) }
        }
    }
}
