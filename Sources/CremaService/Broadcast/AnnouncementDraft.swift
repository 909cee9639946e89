/// A line a store's staff asks to show on its board (`POST /v1/stores/{store}/announcements`), as sent: the service
/// checks the message and parses `until` (RFC 3339) in that order, so the field an answer names does not depend on
/// who calls.
public struct AnnouncementDraft: Sendable, Hashable {
    public var message: String
    public var until: String

    public init(message: String, until: String) {
        self.message = message
        self.until = until
    }
}
