import Hummingbird
import Logging

/// One structured line per request: method, route template, status and duration, with Hummingbird's
/// request id. Never headers (keys) or bodies (customer names).
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info(
            "request",
            metadata: [
                "http.method": "\(request.method.rawValue)",
                "http.route": "\(context.endpointPath ?? "unmatched")",
                "http.status": "\(response.status.code)",
                "http.duration_ms": "\(Int(milliseconds.rounded()))",
            ])
        return response
    }
}
