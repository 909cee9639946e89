/// Why a value could not be written as JSON.
public enum JSONWriterError: Error, Equatable {
    /// NaN or an infinity, which JSON cannot spell (`JSONEncoder` refuses them too).
    case nonFiniteNumber

    /// Stable and machine-readable, as the API's error codes are.
    public var code: String {
        switch self {
        case .nonFiniteNumber: "non_finite_number"
        }
    }
}
