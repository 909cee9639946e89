import NIOCore
import Synchronization

/// What a connection's event loop tells the tasks that send on it: whether it still takes new streams.
final class APNsConnectionFlags: Sendable {
    private let accepting = Atomic<Bool>(true)

    var acceptsStreams: Bool { accepting.load(ordering: .acquiring) }

    func setAcceptsStreams(_ value: Bool) { accepting.store(value, ordering: .releasing) }
}

/// One HTTP/2 connection to APNs, shared by every concurrent send of one key to one host. Sends that arrive
/// while the event loop is busy are written together: the first of a batch schedules the write, the rest join
/// it, so a busy connection writes many requests per flush instead of one flush per frame.
final class APNsConnection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<APNsConnectionHandler>
    private let flags: APNsConnectionFlags
    private let queue = Mutex(Queue())
    private static let sendIDs = Atomic<UInt64>(0)

    private struct Queue {
        var submissions: [APNsSubmission] = []
        var scheduled = false
    }

    init(channel: any Channel, handler: NIOLoopBound<APNsConnectionHandler>, flags: APNsConnectionFlags) {
        self.channel = channel
        self.handler = handler
        self.flags = flags
    }

    /// Whether the connection is still open (it may be finishing its last requests without taking new ones).
    var isOpen: Bool { channel.isActive }

    /// Whether new requests may go here (false after GOAWAY, a close, or when stream ids run out).
    var acceptsStreams: Bool { flags.acceptsStreams && channel.isActive }

    /// Sends one request and waits for how it ended. Never throws: every ending is an outcome, so the caller
    /// decides whether a request that was `notSent` goes again.
    func send(_ request: APNsWireRequest, deadline: NIODeadline) async -> APNsStreamOutcome {
        let sendID = Self.sendIDs.add(1, ordering: .relaxed).newValue
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: APNsStreamOutcome.self)
        let submission = APNsSubmission(sendID: sendID, request: request, deadline: deadline, promise: promise)
        let schedules = queue.withLock { queue in
            queue.submissions.append(submission)
            defer { queue.scheduled = true }
            return !queue.scheduled
        }
        if schedules {
            loop.execute { [self] in
                let batch = queue.withLock { queue in
                    queue.scheduled = false
                    defer { queue.submissions = [] }
                    return queue.submissions
                }
                handler.value.start(batch)
            }
        }
        return await withTaskCancellationHandler {
            do {
                return try await promise.futureResult.get()
            } catch {
                return .failed(.transport("\(error)"))
            }
        } onCancel: {
            cancel(sendID)
        }
    }

    /// A cancelled send still queued leaves the queue at once; one already handed to the loop is abandoned there
    /// (after its batch: the batch was taken from the queue first, and the loop runs tasks in order).
    private func cancel(_ sendID: UInt64) {
        let queued = queue.withLock { queue -> APNsSubmission? in
            guard let index = queue.submissions.firstIndex(where: { $0.sendID == sendID }) else { return nil }
            return queue.submissions.remove(at: index)
        }
        if let queued {
            queued.promise.succeed(.failed(.cancelled))
        } else {
            channel.eventLoop.execute { [handler] in handler.value.abandon(sendID, because: .cancelled) }
        }
    }

    /// Closes the connection; requests in flight end as the close decides. Completes when it has closed.
    @discardableResult
    func close() -> EventLoopFuture<Void> {
        let closed = channel.eventLoop.makePromise(of: Void.self)
        channel.close(promise: closed)
        // Closing a connection that already closed is not a failure here.
        return closed.futureResult.flatMapErrorThrowing { _ in }
    }
}
