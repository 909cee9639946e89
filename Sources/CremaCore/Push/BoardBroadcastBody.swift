public import CremaAPNsProtocol
public import CremaActivityModels
public import Foundation

/// The body of one broadcast on a store's channel: a Live Activity `update` carrying the board (a broadcast cannot
/// start an activity). Kept within the device push cap of 4096 bytes, under the broadcast route's 5120, because
/// ActivityKit itself caps an activity's data at 4 KB (docs/apns.md §9.4).
public enum BoardBroadcastBody {
    typealias Payload = APNsPayload.LiveActivity<StoreBoardAttributes.ContentState, StoreBoardAttributes>

    /// Optional fields, least needed first; the lists and the words above them are never dropped.
    public static let dropOrder = ["aps.content-state.lockScreen.announcement", "aps.content-state.announcement", "aps.stale-date"]

    /// `staleDate` marks the board out of date if no newer broadcast comes (a store that stopped sending).
    public static func make(_ state: StoreBoardAttributes.ContentState, staleDate: Date?) -> APNsBody {
        fit(aps(state, event: .update, staleDate: staleDate))
    }

    /// A push-to-start that starts the board on one device subscribed to the store's channel (`input-push-channel`,
    /// iOS 18): the board's attributes and state now, and an alert naming the store with the board's first line.
    public static func start(
        _ state: StoreBoardAttributes.ContentState, attributes: StoreBoardAttributes, channelID: String, staleDate: Date?
    ) -> APNsBody {
        var aps = aps(state, event: .start, staleDate: staleDate)
        aps.attributesType = "StoreBoardAttributes"
        aps.attributes = attributes
        aps.inputPushChannel = channelID
        aps.alert = .init(title: attributes.storeName, body: state.lockScreen.title, sound: nil)
        return fit(aps)
    }

    private static func aps(_ state: StoreBoardAttributes.ContentState, event: LiveActivityEvent, staleDate: Date?) -> Payload.APS {
        Payload.APS(
            timestamp: APNsPayload.unixSeconds(state.updatedAt) ?? 0, event: event, contentState: state,
            staleDate: staleDate.flatMap(APNsPayload.unixSeconds))
    }

    /// Under the cap by `dropOrder`, then by cutting the texts; the fullest board needs neither (a test holds it).
    private static func fit(_ aps: Payload.APS) -> APNsBody {
        APNsBodyFitter.fit(
            aps,
            drops: [
                { $0.contentState.lockScreen.announcement.take() },
                { $0.contentState.announcement.take() },
                { $0.staleDate.take() },
            ],
            names: dropOrder,
            cap: { aps, limit in
                aps.contentState.small.title = TextByteCap.cap(aps.contentState.small.title, to: limit)
                aps.contentState.small.status = TextByteCap.cap(aps.contentState.small.status, to: limit)
                aps.contentState.lockScreen.title = TextByteCap.cap(aps.contentState.lockScreen.title, to: limit)
                aps.contentState.lockScreen.subtitle = TextByteCap.cap(aps.contentState.lockScreen.subtitle, to: limit)
            },
            encode: { APNsPayload.encode(Payload(aps: $0)) })
    }

    /// How long a board stays current on a device without a newer broadcast.
    public static let staleAfter: Double = 30 * 60
}
