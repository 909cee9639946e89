import Synchronization

/// Links a connection's pipeline, which sees its client leave, to the task answering it: an answer no one will read
/// is cancelled, and with it the statement it waits on, on the server (`PQcancel`), instead of holding a connection
/// and its locks until it ends on its own.
final class ClientGoneWatch: Sendable {
    private enum State {
        case watching((@Sendable () -> Void)?)
        case gone
    }

    private let state = Mutex<State>(.watching(nil))

    /// Runs `action` when the client leaves in the middle of a request, at once if it already has.
    func whenGone(_ action: @escaping @Sendable () -> Void) {
        let goneAlready = state.withLock { state -> Bool in
            guard case .watching = state else { return true }
            state = .watching(action)
            return false
        }
        if goneAlready { action() }
    }

    /// The client left while a request of its was being answered.
    func clientLeft() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard case .watching(let action) = state else { return nil }
            state = .gone
            return action
        }
        action?()
    }
}
