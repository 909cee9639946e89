/// Text from a POS or barista made safe to show on a device: characters that reorder or hide what is read
/// (bidirectional controls, zero-width and invisible characters) go, so a Lock Screen shows what it seems to.
public enum DisplayText {
    /// Removes bidirectional embeddings, overrides and isolates (U+202A–202E, U+2066–2069), zero-width and
    /// invisible characters (U+200B–200F, U+2060–2064, U+FEFF, U+00AD), and turns line and paragraph
    /// separators (U+2028, U+2029) into spaces, as a newline is. A zero-width joiner inside an emoji sequence
    /// (👩‍💻) is part of one visible picture and stays.
    public static func visible(_ text: String) -> String {
        mayHideOrReorder(text) ? visibleByScalar(text) : text
    }

    /// Whether `text` has a byte that can begin one of the characters `visible` removes or replaces: they all
    /// start with 0xC2 (U+00AD), 0xE2 (U+2000–U+2FFF) or 0xEF (U+FEFF). Text without one (ASCII, accented
    /// Latin, Japanese) is returned as it is, without a walk.
    static func mayHideOrReorder(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0xC2 || $0 == 0xE2 || $0 == 0xEF }
    }

    /// The scalar walk `visible` falls back to, and the reference its fast path is tested against.
    static func visibleByScalar(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            switch scalar.value {
            case 0x2028, 0x2029:
                result.append(" ")
            case 0x200D where index > 0 && index + 1 < scalars.count && isEmoji(scalars[index - 1]) && isEmoji(scalars[index + 1]):
                result.append(scalar)
            case 0x202A...0x202E, 0x2066...0x2069, 0x200B...0x200F, 0x2060...0x2064, 0xFEFF, 0x00AD:
                continue
            default:
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// An emoji (not the ASCII digits and signs Unicode also calls emoji), a skin tone or U+FE0F: what can
    /// sit either side of a joiner in an emoji sequence.
    private static func isEmoji(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.properties.isEmoji && scalar.value > 0x7F) || scalar.properties.isEmojiModifier || scalar.value == 0xFE0F
    }
}
