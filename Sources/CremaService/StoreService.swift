public import CremaCore
public import CremaStore
import Foundation

/// Creates and renames stores, for a tenant's POS key (`PUT /v1/stores/{store}`) and its administrator
/// (`PUT /v1/admin/tenants/{tenant}/stores/{store}`, `crema admin store`) alike: one set of rules for both.
public struct StoreService: Sendable {
    public let stores: StoreRepository

    public init(stores: StoreRepository) { self.stores = stores }

    /// The roles that create and rename their tenant's stores through `PUT /v1/stores/{store}`: its POS (an
    /// administrator goes through the admin routes, checked there as the tenant's administrator).
    public static let writers: Set<Role> = [.pos]

    /// The data `principal` writes stores in; `forbidden` unless its role is one of `writers`.
    public static func writerScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: writers)
    }

    /// Checks the request and writes the store in `tenant`; `created` tells a new store from a renamed one.
    public func put(id: String, _ request: StoreDefinition, tenant: String) async throws -> (store: Store, created: Bool) {
        guard StoreID.isValid(id) else {
            throw ServiceError.invalidField(field: "store", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
        let name = request.name.trimmingCharacters(in: .whitespacesAndNewlines)
        // Counted in code points, as the table's CHECK (length(name) <= 120) and the document's maxLength count,
        // before trimming, so that what the document calls too long is refused.
        guard !name.isEmpty, request.name.unicodeScalars.count <= 120,
            !request.name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw ServiceError.invalidValue(field: "name", reason: "must be 1–120 characters without control characters")
        }
        let timezone = request.timezone ?? "UTC"
        guard timezone.utf8.count <= 64, !timezone.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw ServiceError.invalidValue(field: "timezone", reason: "is not an IANA time zone")
        }
        for (field, minutes) in [("ready_expiry_minutes", request.readyExpiryMinutes), ("queued_expiry_minutes", request.queuedExpiryMinutes)] {
            if let minutes, !ExpiryLimits.minutesRange.contains(minutes) {
                throw ServiceError.invalidValue(
                    field: field, reason: "must be \(ExpiryLimits.minutesRange.lowerBound)–\(ExpiryLimits.minutesRange.upperBound) minutes")
            }
        }
        // Absent keeps the stored place, null clears it; a place is checked before anything is written.
        var location: StoreLocation?? = request.location
        if case .some(.some(let place)) = request.location {
            do {
                location = try StoreLocation.validated(latitude: place.latitude, longitude: place.longitude)
            } catch {
                guard case .invalidValue(let field, let reason) = error else { throw ServiceError.invalidValue(field: "location", reason: error.message) }
                throw ServiceError.invalidValue(field: field, reason: reason)
            }
        }
        return try await stores.put(
            id: id, name: name, timezone: timezone, tenant: tenant, readyExpiryMinutes: request.readyExpiryMinutes,
            queuedExpiryMinutes: request.queuedExpiryMinutes, location: location)
    }
}
