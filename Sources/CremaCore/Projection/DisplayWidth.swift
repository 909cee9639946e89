/// How many display columns text takes on screen, and how to cut it to a budget without breaking a character.
///
/// Budgets are counted in columns because a Japanese or Korean character is about twice as wide as a Latin
/// one: East Asian Wide and Fullwidth characters and emoji count 2, everything else 1 (per grapheme cluster,
/// so "é" written as e + combining accent, a flag, or a family emoji is one unit). The table is a compact
/// over-approximation of Unicode's East Asian Width (UAX #11) and emoji presentation (UTS #51): counting a
/// character as wider than it renders only shortens text, never overflows it.
public enum DisplayWidth {
    /// The ellipsis that marks a cut; it counts 1 column.
    public static let ellipsis: Character = "…"

    /// Columns of a whole string: the sum over its grapheme clusters.
    public static func columns(of text: some StringProtocol) -> Int {
        asciiColumns(text) ?? standaloneColumns(text) ?? columnsByCharacter(of: text)
    }

    /// The grapheme walk `columns(of:)` falls back to, and the reference its ASCII path is tested against.
    static func columnsByCharacter(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + columns(of: $1) }
    }

    /// Columns of ASCII text without a grapheme walk (most of what a projection measures is ASCII): every ASCII
    /// character is one narrow column, and CR LF, the only cluster of two ASCII scalars, is one. Nil when any
    /// byte is not ASCII.
    static func asciiColumns(_ text: some StringProtocol) -> Int? {
        var count = 0
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte >= 0x80 { return nil }
            if byte != 0x0A || previous != 0x0D { count += 1 }
            previous = byte
        }
        return count
    }

    /// Columns of text whose every scalar is a grapheme cluster of its own (`isStandalone`: Latin, kana, ideographs,
    /// Hangul syllables, fullwidth forms), the sum of each scalar's width, without a grapheme walk; nil when a scalar
    /// could join a neighbour or lies outside those blocks.
    static func standaloneColumns(_ text: some StringProtocol) -> Int? {
        var count = 0
        for scalar in text.unicodeScalars {
            guard isStandalone(scalar.value) else { return nil }
            count += isWide(scalar.value) ? 2 : 1
        }
        return count
    }

    /// Scalars that never share a grapheme cluster with a neighbour that is itself standalone (UAX #29: none is
    /// Extend, SpacingMark, Prepend, a joiner, a selector, a Hangul jamo, a regional indicator or CR): ASCII but CR,
    /// Latin-1 to the spacing modifiers (U+00A0–U+02FF), dashes, quotes and the ellipsis (U+2010–U+2027), CJK
    /// symbols and kana less the combining marks (U+302A–U+302F, U+3099–U+309A), CJK ideographs, Hangul syllables,
    /// and fullwidth and halfwidth forms less the halfwidth voicing marks (U+FF9E–U+FF9F).
    static func isStandalone(_ v: UInt32) -> Bool {
        switch v {
        case 0x00...0x0C, 0x0E...0x7F, 0xA0...0x2FF, 0x2010...0x2027, 0x3000...0x3029, 0x3030...0x3098, 0x309B...0x30FF,
            0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF01...0xFF9D:
            true
        default:
            false
        }
    }

    /// Columns of one grapheme cluster: 2 when it is wide or shown as an emoji, otherwise 1.
    public static func columns(of character: Character) -> Int {
        var sawTextSelector = false
        var sawEmojiSelector = false
        var wide = false
        for scalar in character.unicodeScalars {
            switch scalar.value {
            case 0xFE0E: sawTextSelector = true
            case 0xFE0F: sawEmojiSelector = true
            default: if isWide(scalar.value) { wide = true }
            }
        }
        if sawEmojiSelector { return 2 }  // an emoji presentation sequence ("❤️", "1️⃣")
        if wide && !(sawTextSelector && !isEastAsianWide(character.unicodeScalars.first!.value)) { return 2 }
        return 1
    }

    /// `text` unchanged when it fits `budget` columns; otherwise its longest prefix of whole grapheme clusters
    /// that fits together with a trailing "…" (trailing spaces before the ellipsis are dropped).
    public static func truncate(_ text: String, toColumns budget: Int) -> String {
        guard budget > 0 else { return "" }
        if columns(of: text) <= budget { return text }
        // One column goes to the ellipsis.
        var kept = standalonePrefix(text, columns: budget - 1) ?? prefixByCharacter(text, columns: budget - 1)
        while let last = kept.last, last.isWhitespace { kept = kept.dropLast() }
        return kept + String(ellipsis)
    }

    /// The longest prefix of whole grapheme clusters within `budget` columns: the walk `truncate` falls back to.
    static func prefixByCharacter(_ text: String, columns budget: Int) -> Substring {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = columns(of: text[index])
            if used + width > budget { break }
            used += width
            end = text.index(after: index)
        }
        return text[..<end]
    }

    /// The same prefix for text whose every scalar is standalone, where each scalar is a cluster; nil otherwise (the
    /// whole text is checked: a scalar after the cut could otherwise join the last one kept).
    static func standalonePrefix(_ text: String, columns budget: Int) -> Substring? {
        let scalars = text.unicodeScalars
        var used = 0
        var end = scalars.startIndex
        var cut = false
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let value = scalars[index].value
            guard isStandalone(value) else { return nil }
            scalars.formIndex(after: &index)
            if cut { continue }
            let width = isWide(value) ? 2 : 1
            if used + width > budget {
                cut = true
            } else {
                used += width
                end = index
            }
        }
        return text[..<end]
    }

    static func isWide(_ value: UInt32) -> Bool {
        isEastAsianWide(value) || isEmojiPresentation(value)
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks: CJK, Hangul, kana, fullwidth forms.
    static func isEastAsianWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F,  // Hangul Jamo initial consonants
            0x2329...0x232A,  // angle brackets
            0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
            0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK compatibility
            0x3400...0x4DBF,  // CJK Extension A
            0x4E00...0x9FFF,  // CJK Unified Ideographs
            0xA000...0xA4CF,  // Yi
            0xA960...0xA97F,  // Hangul Jamo Extended-A
            0xAC00...0xD7A3,  // Hangul syllables
            0xF900...0xFAFF,  // CJK compatibility ideographs
            0xFE10...0xFE19,  // vertical forms
            0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
            0xFF00...0xFF60,  // fullwidth ASCII and punctuation
            0xFFE0...0xFFE6,  // fullwidth signs
            0x16FE0...0x18AFF,  // Tangut and ideographic symbols
            0x1B000...0x1B2FF,  // Kana supplement and extensions
            0x1F200...0x1F2FF,  // enclosed ideographic supplement
            0x20000...0x2FFFD,  // CJK Extensions B–F
            0x30000...0x3FFFD:  // CJK Extensions G–H
            true
        default:
            false
        }
    }

    /// Characters shown as emoji by default (Emoji_Presentation), generously rounded to whole blocks.
    static func isEmojiPresentation(_ v: UInt32) -> Bool {
        switch v {
        case 0x231A...0x231B, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE, 0x2614...0x2615,
            0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5,
            0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705, 0x270A...0x270B,
            0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF,
            0x2B1B...0x2B1C, 0x2B50, 0x2B55,
            0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A,
            0x1F1E6...0x1F1FF,  // regional indicators (flags)
            0x1F300...0x1F64F,  // pictographs, emoticons
            0x1F680...0x1F6FF,  // transport and map
            0x1F7E0...0x1F7EB,  // coloured circles and squares
            0x1F90C...0x1F9FF,  // supplemental symbols and pictographs
            0x1FA70...0x1FAFF:  // symbols and pictographs extended-A
            true
        default:
            false
        }
    }
}
