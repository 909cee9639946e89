/// Follows a request head's bytes just far enough to say who reads them next: the handler that waits, or the HTTP
/// decoder, once the head is whole or holds a byte the decoder refuses at once (a TLS hello on the plain port).
struct RequestHeadScanner: Sendable {
    /// What the bytes so far say.
    enum Verdict: Sendable, Equatable {
        /// No empty line after the request line yet, and nothing the decoder would refuse.
        case incomplete
        /// An empty line ended the head (CRLF, or a bare LF, which the decoder then refuses).
        case ended
        /// A byte no request head may hold where it stands: the decoder answers `malformed_request`.
        case refused
    }

    private var requestLineStarted = false
    private var atLineStart = false

    /// Reads the bytes that arrived after those already scanned; stop calling once it is no longer `incomplete`.
    mutating func scan(_ bytes: some Sequence<UInt8>) -> Verdict {
        for byte in bytes {
            guard requestLineStarted else {
                // The decoder skips empty lines before a request line; every method it knows starts with a capital.
                if byte == Self.cr || byte == Self.lf { continue }
                guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) else { return .refused }
                requestLineStarted = true
                continue
            }
            switch byte {
            case Self.lf:
                if atLineStart { return .ended }
                atLineStart = true
            case Self.cr:
                break
            case UInt8(ascii: "\t"):
                atLineStart = false
            case 0..<0x20, 0x7F:
                return .refused
            default:
                atLineStart = false
            }
        }
        return .incomplete
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
}
