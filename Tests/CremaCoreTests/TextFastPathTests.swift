@testable import CremaCore
import PropertyBased
import Testing

/// The projection measures and cleans text on every event; its byte-level shortcuts for ASCII and for text with
/// nothing to hide must give exactly what the grapheme and scalar walks give, for any text a client can send.
@Suite struct TextFastPathTests {
    /// Pieces chosen to sit on the shortcuts' edges: ASCII controls and CR LF, every kind of whitespace (tab, NBSP,
    /// NEL, ideographic space, line separators), a space carrying a combining mark, invisible and bidirectional
    /// characters, joiners inside and outside emoji, wide and fullwidth text, and the ellipsis itself.
    static let pieces: [String] = [
        "a", "Ana", "Oat latte", "#42", " ", "  ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{1F}", "\u{7F}",
        "\u{00A0}", "\u{0085}", "\u{3000}", "\u{2028}", "\u{2029}", " \u{301}", "e\u{301}", "é", "ñ", "…", "—",
        "\u{200B}", "\u{200D}", "\u{202E}", "\u{2066}", "\u{FEFF}", "\u{00AD}", "抹茶", "ラテ", "ｶﾌｪ", "Ｃ", "한",
        "☕", "❤️", "❤\u{FE0E}", "👍🏽", "👩‍💻", "🇯🇵", "1️⃣",
    ]

    static let text = Gen<String?>.element(of: pieces).map { $0 ?? "" }.array(of: 0...12).map { $0.joined() }

    @Test("ASCII columns are the grapheme walk's") func asciiColumnsAreTheGraphemeWalks() async {
        await propertyCheck(count: 2_000, input: Self.text) { text in
            #expect(DisplayWidth.columns(of: text) == DisplayWidth.columnsByCharacter(of: text))
            #expect(DisplayWidth.columns(of: text[...]) == DisplayWidth.columnsByCharacter(of: text[...]))
        }
    }

    @Test("the ASCII cut keeps the grapheme walk's prefix") func theASCIICutKeepsTheGraphemeWalksPrefix() async {
        await propertyCheck(count: 2_000, input: Self.text, Gen.int(in: 0...20)) { text, budget in
            if let fast = DisplayWidth.asciiPrefix(text, columns: budget) {
                #expect(fast == DisplayWidth.prefixByCharacter(text, columns: budget))
            }
        }
    }

    @Test("text with nothing to hide comes back as the scalar walk returns it") func textWithNothingToHideComesBackAsTheScalarWalkReturnsIt() async {
        await propertyCheck(count: 2_000, input: Self.text) { text in
            #expect(DisplayText.visible(text) == DisplayText.visibleByScalar(text))
        }
    }

    @Test("clean ASCII is what the split and join give") func cleanASCIIIsWhatTheSplitAndJoinGive() async {
        await propertyCheck(count: 2_000, input: Self.text) { text in
            #expect(OrderProjector.clean(text) == OrderProjector.collapsingWhitespace(DisplayText.visibleByScalar(text)))
        }
    }

    @Test("the shortcuts are taken for plain names and refused at their edges") func theShortcutsAreTakenForPlainNamesAndRefusedAtTheirEdges() {
        #expect(DisplayWidth.asciiColumns("Oat latte") == 9)
        #expect(DisplayWidth.asciiColumns("a\r\nb") == 3)
        #expect(DisplayWidth.asciiColumns("café") == nil)
        #expect(DisplayWidth.asciiPrefix("a\r\nb", columns: 2) == nil)
        #expect(!DisplayText.mayHideOrReorder("María 抹茶"))
        #expect(DisplayText.mayHideOrReorder("Ana\u{200B}"))
        #expect(OrderProjector.isCleanASCII("Oat latte"))
        for edge in ["", " Ana", "Ana ", "Oat  latte", "Oat\tlatte", "Ana\u{7F}", "café"] {
            #expect(!OrderProjector.isCleanASCII(edge), "\(edge)")
        }
    }
}
