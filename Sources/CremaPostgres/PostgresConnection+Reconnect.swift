import CLibPQ
import Foundation

// What the pool asks at a lease: whether the connection can be handed out as it is, and if not, why; and the
// reconnect itself. The rules are the machine's (``PostgresConnectionStateMachine/leased(connectionOK:transaction:)``).
extension PostgresConnection {
    /// Checks the connection without a round trip: reads whatever the server sent (such as a shutdown
    /// notice) and reports whether the connection is still usable.
    public func isUsable() async -> Bool { reconnectReason() == nil }

    /// Why the next lease must reconnect this connection, or nil to hand it out as it is (no round trip).
    func reconnectReason() -> PostgresConnectionStateMachine.ReconnectReason? {
        lock.withLock {
            var connectionOK = false
            if let handle, machine.isIdle {
                readWaiting(handle)
                connectionOK = PQstatus(handle) == CONNECTION_OK
            }
            guard case .reconnect(let reason) = machine.leased(connectionOK: connectionOK, transaction: transactionStatus()) else { return nil }
            return reason
        }
    }

    /// Whether the server refused a write as read-only since the last reset: why the next lease reconnects.
    public var refusedWrites: Bool { lock.withLock { machine.refusedWrites } }

    /// Notes what a statement's failure says about the server behind this connection (a read-only one is left at
    /// the next lease); the pool calls it with every error its callers see.
    public func noteFailure(_ error: any Error) {
        guard let error = error as? PostgresError else { return }
        lock.withLock { machine.noteFailure(error) }
    }

    /// Asks the pool to reconnect this connection at its next lease: its server is not the kind the caller wants (a
    /// standby read URL that reached a primary after a promotion), and libpq's `target_session_attrs` may find one.
    public func reconnectAtNextLease() { lock.withLock { machine.markUnwanted() } }

    /// Whether `reconnectAtNextLease` was asked since the last reset.
    public var isUnwanted: Bool { lock.withLock { machine.unwanted } }

    /// Whether a statement of this connection was cancelled since its last reset (a client left mid-request): why
    /// it is reset at its next lease, which is then routine rather than a fault.
    public var wasCancelled: Bool { lock.withLock { machine.cancelled } }

    /// Re-establishes a broken connection with the same parameters (`PQreset`, blocking: on a dispatch queue).
    public func reconnect() async throws(PostgresError) {
        let started: Result<UnsafeHandle, PostgresError> = lock.withLock {
            switch machine.resetStarted() {
            case .fail(let error): return .failure(error)
            case .reset:
                detach()
                guard let handle else { preconditionFailure("an open connection without a handle") }
                return .success(UnsafeHandle(pointer: handle))
            }
        }
        // Nobody else touches the handle while it is off the loop and leased to this caller.
        let resetting = try started.get()
        let failure: PostgresError? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let failure = Self.reset(resetting)
                // On this thread: a `PQcancel` in progress may hold the lock through a connect timeout.
                self.replaceCancelHandle(for: resetting)
                continuation.resume(returning: failure)
            }
        }
        let ended: Machine.ResetEnd = lock.withLock {
            let ended = machine.resetEnded(failure)
            if ended == .attach { attach(resetting.pointer) }
            return ended
        }
        if case .fail(let error) = ended { throw error }
    }

    private func replaceCancelHandle(for handle: UnsafeHandle) {
        cancelLock.withLock {
            if let cancelHandle { PQfreeCancel(cancelHandle) }
            cancelHandle = PQgetCancel(handle.pointer)
        }
    }
}
