import CremaCore
import Hummingbird
import Logging

/// Resolves `Authorization: Bearer <key>` to a role. Routes decide what a role may do
/// (`CremaRequestContext.authorize`); the key itself is never logged.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    let keys: APIKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        {
            context.role = keys.role(for: header.dropFirst(7))
        }
        if let role = context.role { context.logger[metadataKey: "crema.role"] = "\(role.rawValue)" }
        return try await next(request, context)
    }
}
