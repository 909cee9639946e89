@testable import CremaCore
import PropertyBased
import Testing

/// The projection measures and cleans text on every event; its shortcuts (for ASCII, for text whose every scalar is a
/// character of its own, for text with nothing to hide) must give exactly what the grapheme and scalar walks give, for
/// any text a client can send.
@Suite struct TextFastPathTests {
    /// Pieces chosen to sit on the shortcuts' edges: ASCII controls and CR LF, every kind of whitespace (tab, NBSP,
    /// NEL, ideographic space, line separators), a space carrying a combining mark, invisible and bidirectional
    /// characters, joiners inside and outside emoji, wide and fullwidth text, and the ellipsis itself.
    static let pieces: [String] = [
        "a", "Ana", "Oat latte", "#42", " ", "  ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{1F}", "\u{7F}",
        "\u{00A0}", "\u{0085}", "\u{3000}", "\u{2028}", "\u{2029}", " \u{301}", "e\u{301}", "é", "ñ", "…", "—",
        "\u{200B}", "\u{200D}", "\u{202E}", "\u{2066}", "\u{FEFF}", "\u{00AD}", "抹茶", "ラテ", "ｶﾌｪ", "Ｃ", "한",
        "☕", "❤️", "❤\u{FE0E}", "👍🏽", "👩‍💻", "🇯🇵", "1️⃣",
        // Scalars at the edges of the standalone blocks, and what joins them: kana with combining and halfwidth voicing
        // marks, ideographic tone marks, Hangul jamo and a syllable with a trailing jamo, Prepend, SpacingMark and an
        // Indic conjunct, the C1 controls, the spacing modifiers and the first combining mark.
        "か", "か\u{3099}", "ｶﾞ", "ｶ", "\u{FF9E}", "〰", "\u{302A}", "가나", "\u{1100}\u{1161}", "\u{AC00}\u{11A8}", "\u{0600}", "\u{0E33}",
        "क्ष", "\u{85}", "\u{9F}", "ü", "ǅ", "\u{2B0}", "\u{2FF}", "\u{300}", "‐", "“”", "·", "\u{2027}", "\u{2028}", "\u{3000}",
    ]

    static let text = Gen<String?>.element(of: pieces).map { $0 ?? "" }.array(of: 0...12).map { $0.joined() }

    @Test("columns without the walk are the grapheme walk's") func columnsWithoutTheWalkAreTheGraphemeWalks() async {
        await propertyCheck(count: 2_000, input: Self.text) { text in
            #expect(DisplayWidth.columns(of: text) == DisplayWidth.columnsByCharacter(of: text))
            #expect(DisplayWidth.columns(of: text[...]) == DisplayWidth.columnsByCharacter(of: text[...]))
        }
    }

    @Test("the cut without the walk keeps the grapheme walk's prefix") func theCutWithoutTheWalkKeepsTheGraphemeWalksPrefix() async {
        await propertyCheck(count: 2_000, input: Self.text, Gen.int(in: 0...20)) { text, budget in
            if let fast = DisplayWidth.standalonePrefix(text, columns: budget) {
                #expect(Array(fast.utf8) == Array(DisplayWidth.prefixByCharacter(text, columns: budget).utf8))
            }
        }
    }

    @Test("text with nothing to hide comes back as the scalar walk returns it") func textWithNothingToHideComesBackAsTheScalarWalkReturnsIt() async {
        await propertyCheck(count: 2_000, input: Self.text) { text in
            #expect(Array(DisplayText.visible(text).utf8) == Array(DisplayText.visibleByScalar(text).utf8))
        }
    }

    @Test("clean text is what the split and join give") func cleanTextIsWhatTheSplitAndJoinGive() async {
        await propertyCheck(count: 2_000, input: Self.text) { text in
            #expect(OrderProjector.clean(text).map { Array($0.utf8) } == OrderProjector.collapsingWhitespace(DisplayText.visibleByScalar(text)).map { Array($0.utf8) })
        }
    }

    /// Standalone means no neighbour joins it: every standalone scalar, beside each of these and beside itself, stays
    /// a character of its own, by the standard library's own grapheme breaking.
    static let standaloneNeighbours: [Unicode.Scalar] = ["a", " ", "\u{A0}", "\u{AC00}", "か", "\u{FF76}", "…", "抹", "\n", "ü"]

    @Test("no standalone scalar joins a standalone neighbour") func noStandaloneScalarJoinsAStandaloneNeighbour() {
        let standalone = (UInt32(0)...0xFFFF).filter(DisplayWidth.isStandalone).map { Unicode.Scalar($0)! }
        #expect(standalone.count > 30_000)
        // One text per neighbour with it between every two standalone scalars, and one with each scalar doubled: as
        // many characters as scalars, or some pair joined (then the pairs are walked to name it).
        var texts = Self.standaloneNeighbours.map { neighbour in standalone.flatMap { [$0, neighbour] } }
        texts.append(standalone.flatMap { [$0, $0] })
        for scalars in texts {
            #expect(scalars.allSatisfy { DisplayWidth.isStandalone($0.value) })
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            let text = String(view)
            guard text.count != scalars.count else { continue }
            for (first, second) in zip(scalars, scalars.dropFirst()) where String(String.UnicodeScalarView([first, second])).count != 2 {
                Issue.record("U+\(String(first.value, radix: 16)) joins U+\(String(second.value, radix: 16))")
            }
        }
    }

    @Test("the shortcuts are taken for plain names and refused at their edges") func theShortcutsAreTakenForPlainNamesAndRefusedAtTheirEdges() {
        #expect(DisplayWidth.asciiColumns("Oat latte") == 9)
        #expect(DisplayWidth.asciiColumns("a\r\nb") == 3)
        #expect(DisplayWidth.asciiColumns("café") == nil)
        #expect(DisplayWidth.standaloneColumns("María 抹茶ラテ 가나") == 19)
        #expect(DisplayWidth.standaloneColumns("a\r\nb") == nil)
        for joined in ["か\u{3099}", "ｶﾞ", "e\u{301}", "\u{AC00}\u{11A8}", "👍🏽", "\u{85}"] {
            #expect(DisplayWidth.standaloneColumns(joined) == nil, "\(joined)")
        }
        #expect(DisplayWidth.standalonePrefix("抹茶ラテ", columns: 5) == "抹茶")
        #expect(DisplayWidth.standalonePrefix("抹茶ラテか\u{3099}", columns: 5) == nil)
        #expect(!DisplayText.mayHideOrReorder("María 抹茶"))
        #expect(DisplayText.mayHideOrReorder("Ana\u{200B}"))
        #expect(OrderProjector.isClean("Oat latte"))
        #expect(OrderProjector.isClean("María José 抹茶"))
        for edge in ["", " Ana", "Ana ", "Oat  latte", "Oat\tlatte", "Ana\u{7F}", "Ana\u{A0}Mar", "抹茶\u{3000}ラテ", "e\u{301}"] {
            #expect(!OrderProjector.isClean(edge), "\(edge)")
        }
    }
}
