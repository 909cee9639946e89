/// Cuts a text to a number of bytes as it will appear inside a JSON string, on grapheme boundaries with "…":
/// the last resort that makes an APNs body fit however many bytes a name's characters take (a single
/// "character" can be dozens of bytes of combining marks or a family emoji).
public enum TextByteCap {
    /// UTF-8 bytes of "…".
    public static let ellipsisBytes = 3

    /// `text` when it fits `cap` JSON bytes; otherwise its longest prefix that fits with "…" appended; just
    /// "…" when not even one character does.
    public static func cap(_ text: String, to cap: Int) -> String {
        if jsonBytes(text) <= cap { return text }
        var used = ellipsisBytes
        var end = text.startIndex
        for index in text.indices {
            let size = jsonBytes(text[index])
            if used + size > cap { break }
            used += size
            end = text.index(after: index)
        }
        return text[..<end] + "…"
    }

    /// Bytes a text takes inside a JSON string as `JSONEncoder` writes it (escapes counted at their worst).
    public static func jsonBytes(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { sum, scalar in
            switch scalar.value {
            case 0x22, 0x5C: sum + 2  // \" and \\
            case 0..<0x20, 0x7F, 0x2028, 0x2029: sum + 6  // \u00XX at worst
            default: sum + scalar.utf8.count
            }
        }
    }

    public static func jsonBytes(_ character: Character) -> Int { jsonBytes(String(character)) }
}
