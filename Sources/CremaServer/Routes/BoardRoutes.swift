import CremaAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The live board page (`GET /`): one self-contained HTML file from the module's resources, no CDN and no
/// build step. The page itself holds no secret; it asks for a dashboard key (see docs/decisions.md).
struct BoardRoutes {
    func register(on router: Router<CremaRequestContext>) {
        router.get("/") { _, _ in try Self.page() }
    }

    static func page() throws -> Response {
        guard let url = Bundle.module.url(forResource: "board", withExtension: "html", subdirectory: "Resources") else {
            throw APIError.internalError
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache",
                // Everything is same-origin; the key never leaves for another origin.
                HTTPField.Name("Content-Security-Policy")!:
                    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
                HTTPField.Name("Referrer-Policy")!: "no-referrer",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: try Data(contentsOf: url))))
    }
}
