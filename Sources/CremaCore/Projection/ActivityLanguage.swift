/// The languages Crema writes activity texts in; anything else reads English.
public enum ActivityLanguage: String, Sendable, Hashable, CaseIterable {
    case english = "en"
    case spanish = "es"
    case japanese = "ja"

    /// The language of a BCP 47 tag: `es-MX` → Spanish, `ja-JP` → Japanese, `fr` or garbage → English.
    public init(localeTag: String) {
        let language = localeTag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
        self = ActivityLanguage(rawValue: language) ?? .english
    }

    var phrasebook: any Phrasebook {
        switch self {
        case .english: EnglishPhrasebook()
        case .spanish: SpanishPhrasebook()
        case .japanese: JapanesePhrasebook()
        }
    }
}
