public import CremaStore

/// A store's broadcast channel and its board now: what enabling, reading and a customer's subscription answer with,
/// for the HTTP side to show in its own words.
public struct StoreBroadcast: Sendable {
    public var channel: StoreChannelRecord
    public var board: StoreBoard

    public init(channel: StoreChannelRecord, board: StoreBoard) {
        self.channel = channel
        self.board = board
    }
}
