/// Why the HTTP server could not start, said to the operator in words rather than as NIO's `bind(…)` errno.
public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotListen(host: String, port: Int, reason: String)

    /// Stable and machine-readable, as the API's error codes are.
    public var code: String {
        switch self {
        case .cannotListen: "cannot_listen"
        }
    }

    public var description: String {
        switch self {
        case .cannotListen(let host, let port, let reason):
            "cannot listen on \(host):\(port): \(reason)"
        }
    }
}
