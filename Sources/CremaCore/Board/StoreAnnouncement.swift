public import Foundation

/// A store's message on its pickup board ("Espresso machine back at 10:30"), shown until `until`.
public struct StoreAnnouncement: Sendable, Hashable {
    public var message: String
    public var until: Date
    public var createdAt: Date

    public init(message: String, until: Date, createdAt: Date) {
        self.message = message
        self.until = until
        self.createdAt = createdAt
    }

    /// The longest message accepted, in characters; the board shows at most 80 display columns of it.
    public static let maxCharacters = 200
    /// How far ahead an announcement may run: a board is about today.
    public static let maxDuration: Double = 24 * 3600
    /// Announcements one store may have running at once; the board shows the newest.
    public static let maxActivePerStore = 10
}
