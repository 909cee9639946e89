import CremaAPNsProtocol
import CremaAPI
import Crypto
import Foundation
import Hummingbird
import HTTPTypes

/// JSON answers a client revalidates: a strong `ETag` over the exact body, `304 Not Modified` when
/// `If-None-Match` names it, and `Cache-Control: private, no-cache` (per customer; always revalidate, which
/// costs one small request after a `content-changed` widget push).
enum ConditionalResponse {
    static let cacheControl = "private, no-cache"

    static func make(_ request: Request, _ value: some Encodable) throws -> Response {
        let body = try WireCoding.encoder.encode(value)
        let digest = SHA256.hash(data: body).prefix(16).hexEncoded
        let etag = "\"\(digest)\""
        let headers: HTTPFields = [.eTag: etag, .cacheControl: cacheControl]
        if let presented = request.headers[.ifNoneMatch], matches(presented, etag) {
            return Response(status: .notModified, headers: headers)
        }
        return JSONResponse.make(.ok, raw: String(decoding: body, as: UTF8.self), headers: headers)
    }

    /// RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (`W/` ignored).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}
