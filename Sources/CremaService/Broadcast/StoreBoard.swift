public import CremaAPNsProtocol
import CremaCore
public import CremaActivityModels
public import CremaStore
public import Foundation

/// A store's board at one moment, projected once and read three ways: the broadcast body devices get, and the
/// `content_state` and `attributes` the API shows, which are that body's own fields (so they cannot disagree).
public struct StoreBoard: Sendable {
    /// The board as projected, for pushes built from it (a push-to-start onto the channel).
    public var board: (attributes: StoreBoardAttributes, state: StoreBoardAttributes.ContentState)
    public var body: APNsBody
    public var contentState: JSONValue
    public var attributes: JSONValue
    /// When the board changes by itself (the next running announcement ends), so that it is broadcast again then.
    public var changesAt: Date?

    public init(store: String, inputs: BoardInputs, now: Date) {
        let (attributes, state) = StoreBoardProjector.project(
            storeID: store, storeName: inputs.storeName, orders: inputs.orders, announcements: inputs.announcements, now: now)
        board = (attributes, state)
        changesAt = inputs.announcements.map(\.until).filter { $0 > now }.min()
        body = BoardBroadcastBody.make(state, staleDate: now.addingTimeInterval(BoardBroadcastBody.staleAfter))
        let sent = (try? JSONDecoder().decode(JSONValue.self, from: body.json)) ?? .object([:])
        contentState = sent["aps"]?["content-state"] ?? .object([:])
        self.attributes = (try? JSONDecoder().decode(JSONValue.self, from: APNsPayload.encode(attributes))) ?? .object([:])
    }
}
