public import Foundation

/// A store's board claimed for broadcasting: the channel it goes to, the priority its changes earned, and how many
/// changes it stands for (a send completes only those).
public struct DueBroadcast: Sendable, Hashable {
    public var channel: StoreChannelRecord
    /// The claim's own id: finishing or retrying the row needs it, so a claim whose lease ran out changes nothing.
    public var lease: UUID
    public var priority: Int
    public var changes: Int64
    public var attempts: Int

    public init(channel: StoreChannelRecord, lease: UUID, priority: Int, changes: Int64, attempts: Int) {
        self.channel = channel
        self.lease = lease
        self.priority = priority
        self.changes = changes
        self.attempts = attempts
    }
}
