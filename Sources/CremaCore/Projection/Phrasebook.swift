import CremaActivityModels

/// One language's wording for every state and event, written for that language rather than translated.
///
/// Each slot returns candidates, longest first; `Phrase.fit` picks the first that fits the slot's budget,
/// cutting only the part that came from outside (names), never the language's own words.
protocol Phrasebook: Sendable {
    /// "10:05 AM", "10:05".
    func clock(_ eta: ETAReading) -> String
    /// `compactTrailing` while waiting: "3 min", "3分"; "Soon" once due.
    func compactETA(_ eta: ETAReading) -> String
    /// `minimal`: "3m", "3分"; nil when due or too long (the symbol shows instead).
    func minimalETA(_ eta: ETAReading) -> String?
    /// `lockScreen.etaRelative`: "in 3 min", "any moment now".
    func relativeETA(_ eta: ETAReading) -> String
    /// `compactTrailing` once there is nothing to count down (ready or ended; waiting states show the ETA).
    func compactWord(_ status: OrderActivityStatus) -> String
    func smallTitle(_ c: PhraseContext) -> [Phrase]
    func smallStatus(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase]
    func lockTitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase]
    func lockSubtitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase]
    func detail(_ c: PhraseContext, summary: String) -> [Phrase]
    func itemsSummary(_ c: PhraseContext) -> [Phrase]
    func alertTitle(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase]
    func alertBody(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase]
}
