/// Why a customer token (a JWT from the brand's backend) was refused. Each case is a stable `code` the app
/// can act on: `token_expired` means "fetch a fresh token"; the others mean a bug or an attack.
public enum CustomerTokenRefusal: String, Error, Sendable, Hashable, CaseIterable {
    /// Not three base64url parts of JSON, or a claim of the wrong type.
    case malformed = "token_malformed"
    /// `alg` is `none`, or names an algorithm no configured key uses (HS/ES confusion lands here).
    case algorithmRefused = "token_algorithm_refused"
    /// No configured key of the token's algorithm verifies its signature.
    case badSignature = "token_signature_invalid"
    case expired = "token_expired"
    case notYetValid = "token_not_yet_valid"
    case wrongIssuer = "token_wrong_issuer"
    case wrongAudience = "token_wrong_audience"
    /// `sub`, `exp`, `iss` or `aud` is missing, or `sub` is not a usable customer ref.
    case missingClaim = "token_missing_claim"
    /// The `tenant` claim names a tenant with no customer token settings (docs/tenants.md).
    case unknownTenant = "token_tenant_unknown"
    /// A JWT was presented but this server has no `CREMA_CUSTOMER_JWT_KEYS`.
    case notConfigured = "customer_tokens_not_configured"

    public var code: String { rawValue }

    public var message: String {
        switch self {
        case .malformed: "The customer token is not a well-formed JWT."
        case .algorithmRefused: "The customer token's 'alg' is not one this server accepts (ES256 or HS256, as configured)."
        case .badSignature: "The customer token's signature does not verify with any configured key."
        case .expired: "The customer token has expired; ask the brand's backend for a fresh one."
        case .notYetValid: "The customer token is not valid yet ('nbf' is in the future)."
        case .wrongIssuer: "The customer token's 'iss' is not the configured issuer."
        case .wrongAudience: "The customer token's 'aud' does not include the configured audience."
        case .missingClaim: "The customer token lacks 'sub', 'exp', 'iss' or 'aud', or its 'sub' is not a customer ref."
        case .unknownTenant: "The customer token's 'tenant' names a tenant that accepts no customer tokens."
        case .notConfigured: "This server accepts no customer tokens (CREMA_CUSTOMER_JWT_KEYS is not set)."
        }
    }
}
