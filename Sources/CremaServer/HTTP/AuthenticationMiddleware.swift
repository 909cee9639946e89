import CremaAPI
import CremaCore
import Hummingbird
import Logging

/// Resolves `Authorization: Bearer <credential>` to a role (an API key) or a customer (a JWT the brand's
/// backend signed). Routes decide what each may do (`CremaRequestContext.authorize`, `authorizeCustomer`);
/// credentials are never logged.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    let keys: APIKeys
    /// nil: no customer tokens configured; a JWT is then refused as `customer_tokens_not_configured`.
    let customers: CustomerTokenVerifier?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        {
            let credential = header.dropFirst(7)
            // API keys first: a configured key keeps working whatever it looks like.
            context.role = keys.role(for: credential)
            if context.role == nil, CustomerTokenVerifier.looksLikeJWT(credential) {
                switch await customers?.verify(String(credential)) ?? .failure(.notConfigured) {
                case .success(let customer): context.customer = customer
                case .failure(let refusal): context.customerRefusal = refusal
                }
            }
        }
        if let role = context.role { context.logger[metadataKey: "crema.role"] = "\(role.rawValue)" }
        if context.customer != nil { context.logger[metadataKey: "crema.role"] = "customer" }
        if let refusal = context.customerRefusal { context.logger[metadataKey: "crema.token_refused"] = "\(refusal.code)" }
        return try await next(request, context)
    }
}
