import CremaAPI
import CremaClock
import CremaCore
import Foundation
import Hummingbird
import Logging

/// Turns every error into the API's JSON error shape and logs server-side failures once. Nothing
/// escapes as Hummingbird's bare 500.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    let routes: RouteTable
    /// Every request fails the same way while the database is down: one line per `databaseLogInterval` tells it.
    let databaseFailures: SharedFailureLog
    /// Counts the refusals of load limits.
    let limitMetrics: LimitMetrics

    /// What a request cancelled because its client left is recorded as (nginx's 499); no client reads it.
    static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    /// Seconds between two "database unavailable" lines while every request fails.
    static let databaseLogInterval: TimeInterval = 10

    init(routes: RouteTable, limitMetrics: LimitMetrics, clock: CremaClock) {
        self.routes = routes
        self.limitMetrics = limitMetrics
        self.databaseFailures = SharedFailureLog(interval: Self.databaseLogInterval, clock: clock)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if Task.isCancelled {
                // The client left mid-request (ClientGoneHandler) or the server is stopping: no one reads this answer,
                // and the failure is the cancellation, not a fault to report. 499 as nginx logs it: not a 5xx.
                context.logger.info("request cancelled before its answer", metadata: ["error": "\(error)"])
                return Response(status: Self.clientClosedRequest)
            }
            var apiError = APIError(error, uploadLimit: context.maxUploadSize)
            if apiError == .notFound {
                let allowed = routes.methods(for: request.uri.path)
                if !allowed.isEmpty { apiError = .methodNotAllowed(allowed: allowed) }
            }
            limitMetrics.count(apiError)
            switch apiError {
            case .internalError:
                // The description holds codes only; the server's detail (which can quote data) is debug-only.
                context.logger.error("request failed", metadata: ["error": "\(error)"])
                context.logger.debug("request failed (detail)", metadata: ["error.detail": "\(String(reflecting: error))"])
            case .databaseUnavailable:
                switch databaseFailures.occurred() {
                case .started(let unlogged):
                    var metadata: Logger.Metadata = ["error": "\(error)"]
                    if unlogged > 0 { metadata["previous_outage_unlogged"] = "\(unlogged)" }
                    context.logger.warning(
                        "database unavailable: requests that need it answer 503 (told at most every \(Int(Self.databaseLogInterval)) s)",
                        metadata: metadata)
                case .continuing(let omitted):
                    context.logger.warning(
                        "database still unavailable", metadata: ["error": "\(error)", "requests_since_last_line": "\(omitted)"])
                case .omit:
                    break
                }
            default:
                context.logger.debug("request refused", metadata: ["error.code": "\(apiError.code)"])
            }
            return try apiError.response(from: request, context: context)
        }
    }
}
