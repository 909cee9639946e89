import NIOCore
import NIOHTTPTypes
import Synchronization

/// A connection whose first request head has arrived, on its way to its task. NIO traps on a wrapper released
/// unclosed, so one never served (the server stopped between the head and the task) closes itself.
final class ArrivedConnection: Sendable {
    private let value: Mutex<NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>?>
    /// Tells the connection's task that its client left mid-request.
    let clientGone: ClientGoneWatch

    init(_ connection: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, clientGone: ClientGoneWatch) {
        value = Mutex(connection)
        self.clientGone = clientGone
    }

    /// The connection, to its one task; nil after the first call.
    func take() -> NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>? {
        value.withLock { $0.take() }
    }

    deinit {
        if let connection = take() {
            Task { try? await connection.executeThenClose { _, _ in } }
        }
    }
}
