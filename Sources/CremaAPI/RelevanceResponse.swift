/// `GET /v1/me/relevance` (docs/design.md §9.2): for each of the customer's open orders, when it matters and where,
/// the clues a watch's relevance widget gives the Smart Stack (`RelevantContext.date(from:to:)`, `.location`).
public struct RelevanceResponse: Codable, Sendable {
    public var entries: [RelevanceEntry]

    public init(entries: [RelevanceEntry]) { self.entries = entries }
}
