/// How a tenant's customer tokens are to be verified (`PUT /v1/admin/tenants/{tenant}/customer-tokens`), replaced
/// whole: checked and sealed by `AdminService.putCustomerTokenSettings`.
public struct CustomerTokenSettingsChange: Sendable {
    /// One key as sent: an `hs256` shared secret or an `es256` public key in PEM.
    public struct Key: Sendable {
        public var algorithm: String
        public var secret: String?
        public var publicKey: String?

        public init(algorithm: String, secret: String? = nil, publicKey: String? = nil) {
            self.algorithm = algorithm
            self.secret = secret
            self.publicKey = publicKey
        }
    }

    public var issuer: String
    public var audience: String
    public var keys: [Key]

    public init(issuer: String, audience: String, keys: [Key]) {
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
    }
}
