import Foundation

/// The locale an order keeps: what the POS sent when it is a language tag, tidied (`ja_JP` → `ja-JP`,
/// `EN` → `en`); English when it is empty or unreadable. A bad locale never costs a customer the order.
public enum OrderLocale {
    /// The tag an order falls back to, in the language texts fall back to.
    public static let fallback = "en"

    /// `es-MX` stays, `ja_JP` becomes `ja-JP`, `EN` becomes `en`, `fr` stays (its texts read English);
    /// `""`, `"  "`, `"english"`, `"1a"` become `en`.
    public static func normalized(_ tag: String) -> String {
        let trimmed = tag.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "_", with: "-")
        let parts = trimmed.split(separator: "-", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= 35, let language = parts.first, (2...3).contains(language.utf8.count),
            language.utf8.allSatisfy(\.isASCIILetter),
            parts.dropFirst().allSatisfy({ (1...8).contains($0.utf8.count) && $0.utf8.allSatisfy(\.isASCIIAlphanumeric) })
        else { return fallback }
        return ([language.lowercased()] + parts.dropFirst().map(canonicalCase)).joined(separator: "-")
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
