public import CremaCore

/// A store as its POS or its administrator defines it (`PUT /v1/stores/{store}`,
/// `PUT /v1/admin/tenants/{tenant}/stores/{store}`, `crema admin store`): what `StoreService` checks and writes, in
/// the application layer's own words, so that the HTTP body and the command line map to one command.
public struct StoreDefinition: Sendable {
    public var name: String
    /// An IANA time zone; nil: UTC.
    public var timezone: String?
    public var readyExpiryMinutes: Int?
    public var queuedExpiryMinutes: Int?
    /// The store's place: nil keeps the stored one, `.some(nil)` clears it, a value replaces it (checked by
    /// `StoreLocation.validated` before anything is written).
    public var location: StoreLocation??

    public init(
        name: String, timezone: String? = nil, readyExpiryMinutes: Int? = nil, queuedExpiryMinutes: Int? = nil,
        location: StoreLocation?? = nil
    ) {
        self.name = name
        self.timezone = timezone
        self.readyExpiryMinutes = readyExpiryMinutes
        self.queuedExpiryMinutes = queuedExpiryMinutes
        self.location = location
    }
}
