/// Store identifiers appear in URLs and as the distribution key, so they are short lowercase slugs.
public enum StoreID {
    /// `market-st`: lowercase letters, digits and dashes, starting with a letter or digit, at most 63.
    public static func isValid(_ value: String) -> Bool {
        guard let first = value.utf8.first, value.utf8.count <= 63 else { return false }
        func allowed(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        return allowed(first) && value.utf8.allSatisfy { allowed($0) || $0 == 0x2D }
    }

    static func validate(_ value: String, field: String) throws(OrderError) {
        guard isValid(value) else {
            throw .invalidValue(field: field, reason: "must be 1–63 lowercase letters, digits or dashes")
        }
    }
}
