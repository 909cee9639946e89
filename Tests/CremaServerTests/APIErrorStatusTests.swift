import CremaAPI
import CremaCore
import CremaServer
import HTTPTypes
import Hummingbird
import Testing

/// Every error the API answers goes out with its status's reason phrase (`HTTP/1.1 405 Method Not Allowed`),
/// whether Hummingbird or the connection pipeline writes it.
@Suite struct APIErrorStatusTests {
    static let errors: [APIError] = [
        .malformedJSON(nil), .invalidField(field: "eta", reason: "is required"), .missingIdempotencyKey, .unauthorized,
        .forbidden(role: .app, allowed: [.pos]), .notFound, .methodNotAllowed(allowed: ["GET"]), .unknownOrder, .unknownStore("x"),
        .unknownToken, .order(.versionConflict(expected: 1, actual: 2, state: .queued)), .order(.invalidValue(field: "f", reason: "r")),
        .idempotencyMismatch, .payloadTooLarge(limit: 1024), .databaseUnavailable, .internalError,
    ]

    @Test("an errors status carries its reason phrase", arguments: errors)
    func anErrorsStatusCarriesItsReasonPhrase(_ error: APIError) {
        #expect(error.status.code == error.statusCode)
        #expect(!error.status.reasonPhrase.isEmpty, "\(error.code) → \(error.statusCode) has no reason phrase")
    }
}
