/// Checks a device, activity or widget token before it is stored: APNs tokens are hex strings whose length
/// Apple does not promise (docs/apns.md §1.1), so the check is hex, even length, and a sane range.
public enum PushTokenValidation {
    /// Today's device tokens are 64 hex digits and Live Activity tokens about 160; these bounds leave room.
    public static let lengths = 32...400

    /// The token in lowercase, or `invalidValue` naming `field`.
    public static func normalized(_ token: String, field: String = "token") throws(OrderError) -> String {
        let lower = token.lowercased()
        guard lengths.contains(lower.utf8.count) else {
            throw .invalidValue(field: field, reason: "must be \(lengths.lowerBound)–\(lengths.upperBound) hex digits")
        }
        guard lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }), lower.utf8.count % 2 == 0 else {
            throw .invalidValue(field: field, reason: "must be an even number of hex digits (0-9, a-f)")
        }
        return lower
    }

    /// What logs show of a token: enough to tell two apart, never enough to use one.
    public static func redacted(_ token: String) -> String {
        token.count <= 8 ? "…" : String(token.prefix(8)) + "…"
    }
}
