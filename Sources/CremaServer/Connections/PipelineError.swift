import CremaAPI
import CremaAPNsProtocol
import CremaCore
import Foundation
import HTTPTypes
import NIOCore

/// Errors answered from the channel pipeline, before a request reaches the router, with the same
/// `{"error":{"code","message","details"}}` document, written as raw HTTP/1.1 and followed by a close.
enum PipelineError: Error, Sendable, Equatable {
    /// The request head outgrew the decoder's limit (431).
    case headerTooLarge(limit: Int)
    /// Bytes that are not an HTTP/1.1 request (400).
    case malformedRequest
    /// The server is at `CREMA_HTTP_MAX_CONNECTIONS` (503).
    case tooManyConnections
    /// A method the router has no route for, answered as the router would (`CONNECT`: 405 with Allow, or 404).
    case route(APIError)

    /// Seconds a refused client should wait before connecting again.
    static let retryAfterSeconds = 1

    var code: String {
        switch self {
        case .headerTooLarge: "header_too_large"
        case .malformedRequest: "malformed_request"
        case .tooManyConnections: "too_many_connections"
        case .route(let error): error.code
        }
    }

    var status: HTTPResponse.Status {
        switch self {
        case .headerTooLarge: .requestHeaderFieldsTooLarge
        case .malformedRequest: .badRequest
        case .tooManyConnections: .serviceUnavailable
        case .route(let error): error.status
        }
    }

    var message: String {
        switch self {
        case .headerTooLarge(let limit): "The request's header fields are larger than \(limit / 1024) KiB."
        case .malformedRequest: "The request is not valid HTTP/1.1."
        case .tooManyConnections: "The server has too many open connections; retry after the Retry-After delay."
        case .route(let error): error.message
        }
    }

    var details: JSONValue {
        switch self {
        case .headerTooLarge(let limit): ["limit_bytes": .number(Double(limit))]
        case .malformedRequest, .tooManyConnections: [:]
        case .route(let error): error.details
        }
    }

    /// The whole answer: status line, headers (always `Connection: close`) and the JSON body. The answers
    /// a flood repeats (garbage, a full server) are encoded once.
    var response: ByteBuffer {
        switch self {
        case .malformedRequest: Self.malformedRequestResponse
        case .tooManyConnections: Self.tooManyConnectionsResponse
        case .headerTooLarge, .route: encoded
        }
    }

    private static let malformedRequestResponse = PipelineError.malformedRequest.encoded
    private static let tooManyConnectionsResponse = PipelineError.tooManyConnections.encoded

    private var encoded: ByteBuffer {
        let body = (try? WireCoding.encoder.encode(["error": ["code": .string(code), "message": .string(message), "details": details]] as JSONValue))
            ?? Data(#"{"error":{"code":"internal_error","message":"","details":{}}}"#.utf8)
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if case .tooManyConnections = self { head += "Retry-After: \(Self.retryAfterSeconds)\r\n" }
        if case .route(.methodNotAllowed(let allowed)) = self { head += "Allow: \(allowed.joined(separator: ", "))\r\n" }
        var buffer = ByteBuffer(string: head + "\r\n")
        buffer.writeBytes(body)
        return buffer
    }
}
