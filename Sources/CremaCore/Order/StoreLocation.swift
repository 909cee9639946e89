/// Where a store is, in WGS 84 degrees: the place a watch's relevance widget is given with an order
/// (`RelevantContext.location`), so the Smart Stack can surface the order near the counter.
public struct StoreLocation: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    /// The ranges a place on Earth has; anything else is a client's mistake, refused before it is stored.
    public static let latitudes: ClosedRange<Double> = -90...90
    public static let longitudes: ClosedRange<Double> = -180...180

    /// A location as given, unchecked (read back from the database, which holds the same ranges).
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A location a client sent: both coordinates finite and within range, else `invalidValue` naming the coordinate.
    public static func validated(latitude: Double, longitude: Double) throws(OrderError) -> StoreLocation {
        guard latitude.isFinite, latitudes.contains(latitude) else {
            throw .invalidValue(field: "location.latitude", reason: "must be a number from -90 to 90")
        }
        guard longitude.isFinite, longitudes.contains(longitude) else {
            throw .invalidValue(field: "location.longitude", reason: "must be a number from -180 to 180")
        }
        return StoreLocation(latitude: latitude, longitude: longitude)
    }
}
