import CremaAPNsProtocol
/// Why a send got no APNs answer at all. A non-2xx answer is not an error: it comes back as an `APNsResponse`
/// for `APNsDisposition` to classify. Every case here is a transport failure the dispatcher retries.
public enum APNsClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No complete answer within the request timeout.
    case timeout
    /// No connection could be made (refused, unreachable, DNS).
    case connectionFailed(String)
    /// The connection closed or reset before the answer was complete.
    case connectionClosed(String)
    /// The TLS handshake failed (untrusted certificate, wrong host name, protocol mismatch).
    case tlsFailed(String)
    /// The task sending the request was cancelled.
    case cancelled
    /// The client was shut down.
    case shutDown
    /// The client could not build the request (a base URL it cannot use).
    case invalidRequest(String)
    /// Any other transport error, with its description.
    case transport(String)

    /// A stable machine-readable code (for delivery logs and metrics).
    public var code: String {
        switch self {
        case .timeout: "apns_timeout"
        case .connectionFailed: "apns_connection_failed"
        case .connectionClosed: "apns_connection_closed"
        case .tlsFailed: "apns_tls_failed"
        case .cancelled: "apns_cancelled"
        case .shutDown: "apns_client_shut_down"
        case .invalidRequest: "apns_invalid_request"
        case .transport: "apns_transport_error"
        }
    }

    public var description: String {
        switch self {
        case .timeout, .cancelled, .shutDown: code
        case .connectionFailed(let detail), .connectionClosed(let detail), .tlsFailed(let detail),
            .invalidRequest(let detail), .transport(let detail):
            "\(code): \(detail)"
        }
    }
}
