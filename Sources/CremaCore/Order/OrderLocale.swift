import Foundation

/// The locale an order keeps: what the POS sent when it is a language tag, tidied (`ja_JP` → `ja-JP`,
/// `EN` → `en`); English when it is empty or unreadable. A bad locale never costs a customer the order.
public enum OrderLocale {
    /// The tag an order falls back to, in the language texts fall back to.
    public static let fallback = "en"

    /// `es-MX` stays, `ja_JP` becomes `ja-JP`, `EN` becomes `en`, `fr` stays (its texts read English);
    /// `""`, `"  "`, `"english"`, `"1a"` become `en`.
    public static func normalized(_ tag: String) -> String {
        // What POS systems send (`en`, `es-MX`) needs neither trimming nor `_` replaced: Foundation only for the rest.
        let trimmed = needsTidying(tag) ? tag.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "_", with: "-") : tag
        let parts = trimmed.split(separator: "-", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= 35, let language = parts.first, (2...3).contains(language.utf8.count),
            language.utf8.allSatisfy(\.isASCIILetter),
            parts.dropFirst().allSatisfy({ (1...8).contains($0.utf8.count) && $0.utf8.allSatisfy(\.isASCIIAlphanumeric) })
        else { return fallback }
        return ([language.lowercased()] + parts.dropFirst().map(canonicalCase)).joined(separator: "-")
    }

    /// Whether `tag` may start or end with white space or holds a `_`: its ends are not printable ASCII, or a `_` is
    /// in it.
    private static func needsTidying(_ tag: String) -> Bool {
        guard let first = tag.utf8.first, let last = tag.utf8.last else { return false }
        return !(0x21...0x7E).contains(first) || !(0x21...0x7E).contains(last) || tag.utf8.contains(UInt8(ascii: "_"))
    }

    /// BCP 47's conventional case: regions upper (`MX`), scripts title (`Hant`), everything else lower.
    private static func canonicalCase(_ subtag: Substring) -> String {
        switch subtag.utf8.count {
        case 2 where subtag.utf8.allSatisfy(\.isASCIILetter): subtag.uppercased()
        case 4 where subtag.utf8.allSatisfy(\.isASCIILetter): subtag.prefix(1).uppercased() + subtag.dropFirst().lowercased()
        default: subtag.lowercased()
        }
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    fileprivate var isASCIIAlphanumeric: Bool { isASCIILetter || (0x30...0x39).contains(self) }
}
