/// An idempotency gate's sleep in tests: says that a wait began, and for how long it would be, then lasts until cancelled
/// (the waiter's wake-up cancels it), never for time.
public final class GateWaits: Sendable {
    private let begun: AsyncStream<Duration>
    private let continuation: AsyncStream<Duration>.Continuation

    public init() { (begun, continuation) = AsyncStream.makeStream() }

    @Sendable public func sleep(_ duration: Duration) async throws {
        continuation.yield(duration)
        let (never, open) = AsyncStream<Never>.makeStream()
        for await _ in never {}
        open.finish()
        try Task.checkCancellation()
    }

    /// The next wait that began (one test task asks at a time).
    public func next() async -> Duration? {
        var waits = begun.makeAsyncIterator()
        return await waits.next()
    }
}
