import CremaAPI
import CremaCore
import CremaService
import CremaSettings
import Hummingbird
import Logging

/// Resolves `Authorization: Bearer <credential>` to an API key's principal (role, tenant, stores) or a customer
/// (a JWT the brand's backend signed). Routes decide what each may do (`CremaRequestContext.authorize`,
/// `authorizeAdmin`, `authorizeCustomer`); credentials are never logged, a generated key only by its public id.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    /// Keys from the environment: the default tenant's role keys and the bootstrap admin key.
    let keys: APIKeys
    /// Keys Crema generated, checked against their stored hashes.
    let generated: APIKeyVerifier
    /// Each tenant's customer token verifier; a tenant without one refuses its tokens.
    let customers: CustomerTokenDirectory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        {
            let credential = header.dropFirst(7)
            // API keys first: a configured key keeps working whatever it looks like.
            context.principal = keys.principal(for: credential)
            if context.principal == nil, APIKeySecret.id(of: credential) != nil {
                switch try await generated.verify(credential) {
                case .success(let principal): context.principal = principal
                case .failure(let refusal): context.keyRefusal = refusal
                case nil: break
                }
            }
            if context.principal == nil, context.keyRefusal == nil, CustomerTokenVerifier.looksLikeJWT(credential) {
                switch await customers.verify(String(credential)) {
                case .success(let customer): context.customer = customer
                case .failure(let refusal): context.customerRefusal = refusal
                }
            }
        }
        if let principal = context.principal {
            context.logger[metadataKey: "crema.role"] = "\(principal.role.rawValue)"
            if let tenant = principal.tenant { context.logger[metadataKey: "crema.tenant"] = "\(tenant)" }
            if let id = principal.keyID { context.logger[metadataKey: "crema.key_id"] = "\(id)" }
        }
        if let customer = context.customer {
            context.logger[metadataKey: "crema.role"] = "customer"
            context.logger[metadataKey: "crema.tenant"] = "\(customer.tenant)"
        }
        if let refusal = context.customerRefusal { context.logger[metadataKey: "crema.token_refused"] = "\(refusal.code)" }
        return try await next(request, context)
    }
}
