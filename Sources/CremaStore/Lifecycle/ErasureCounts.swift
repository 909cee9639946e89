/// What one erasure removed, as logged in `customer_erasures`: a record of its own (not nested in the repository)
/// so the application layer can hand it to the HTTP side without the repository.
public struct ErasureCounts: Sendable, Hashable, Codable {
    public var orders: Int
    public var events: Int
    public var deliveries: Int
    public var tokens: Int
    public var idempotencyKeys: Int
}
