import CremaAPI
import CremaCore
import Hummingbird
import Logging

/// Turns every error into the API's JSON error shape and logs server-side failures once. Nothing
/// escapes as Hummingbird's bare 500.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            var apiError = APIError(error, uploadLimit: context.maxUploadSize)
            if apiError == .notFound {
                let allowed = routes.methods(for: request.uri.path)
                if !allowed.isEmpty { apiError = .methodNotAllowed(allowed: allowed) }
            }
            switch apiError {
            case .internalError:
                // The description holds codes only; the server's detail (which can quote data) is debug-only.
                context.logger.error("request failed", metadata: ["error": "\(error)"])
                context.logger.debug("request failed (detail)", metadata: ["error.detail": "\(String(reflecting: error))"])
            case .databaseUnavailable:
                context.logger.warning("database unavailable", metadata: ["error": "\(error)"])
            default:
                context.logger.debug("request refused", metadata: ["error.code": "\(apiError.code)"])
            }
            return try apiError.response(from: request, context: context)
        }
    }
}
