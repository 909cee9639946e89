/// A store's board claimed for broadcasting: the channel it goes to, the priority its changes earned, and how many
/// changes it stands for (a send completes only those).
public struct DueBroadcast: Sendable, Hashable {
    public var channel: StoreChannelRecord
    public var priority: Int
    public var changes: Int64
    public var attempts: Int

    public init(channel: StoreChannelRecord, priority: Int, changes: Int64, attempts: Int) {
        self.channel = channel
        self.priority = priority
        self.changes = changes
        self.attempts = attempts
    }
}
