import CremaAPNsProtocol
import CremaCore
import Testing

@Suite struct DisplayWidthTests {
    @Test("each character counts one or two columns", arguments: [
        ("a", 1), ("é", 1), ("e\u{301}", 1), ("ｱ", 1), ("ß", 1), ("—", 1), ("…", 1),
        ("抹", 2), ("あ", 2), ("カ", 2), ("한", 2), ("Ａ", 2), ("。", 2),
        ("☕", 2), ("😀", 2), ("👍🏽", 2), ("👨‍👩‍👧‍👦", 2), ("🇯🇵", 2), ("❤️", 2), ("1️⃣", 2), ("❤", 1),
    ])
    func eachCharacterCountsOneOrTwoColumns(_ sample: (String, Int)) {
        #expect(DisplayWidth.columns(of: sample.0) == sample.1, "\(sample.0)")
    }

    @Test("wide text counts two columns per character") func wideTextCountsTwoColumnsPerCharacter() {
        #expect(DisplayWidth.columns(of: "抹茶ラテ") == 8)
        #expect(DisplayWidth.columns(of: "Oat latte 抹茶") == 14)
    }

    @Test("text that fits is left alone") func textThatFitsIsLeftAlone() {
        #expect(DisplayWidth.truncate("Ready", toColumns: 5) == "Ready")
    }

    @Test("cutting leaves room for the ellipsis") func cuttingLeavesRoomForTheEllipsis() {
        #expect(DisplayWidth.truncate("Bartholomew", toColumns: 6) == "Barth…")
        #expect(DisplayWidth.truncate("抹茶ラテ", toColumns: 6) == "抹茶…")
        #expect(DisplayWidth.truncate("抹茶ラテ", toColumns: 5) == "抹茶…")
        #expect(DisplayWidth.truncate("抹茶ラテ", toColumns: 4) == "抹…")
    }

    @Test("cutting never splits a grapheme cluster") func cuttingNeverSplitsAGraphemeCluster() {
        let family = "👨‍👩‍👧‍👦"
        let cut = DisplayWidth.truncate(family + family + family, toColumns: 4)
        #expect(cut == family + "…")
        let accented = String(repeating: "e\u{301}", count: 10)
        #expect(DisplayWidth.truncate(accented, toColumns: 4) == "e\u{301}e\u{301}e\u{301}…")
    }

    @Test("spaces before the ellipsis are dropped") func spacesBeforeTheEllipsisAreDropped() {
        #expect(DisplayWidth.truncate("Oat latte", toColumns: 5) == "Oat…")
    }

    @Test("a budget of zero leaves nothing") func aBudgetOfZeroLeavesNothing() {
        #expect(DisplayWidth.truncate("Ana", toColumns: 0) == "")
    }
}
