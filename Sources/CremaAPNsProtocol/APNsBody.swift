public import Foundation

/// An encoded APNs request body, guaranteed to be at most `APNsBody.maxBytes` of UTF-8, with an account of
/// what had to give way to get there (so a preview or a log can say why a field is missing).
public struct APNsBody: Sendable, Hashable {
    /// APNs' limit for every push type Crema sends (413 `PayloadTooLarge` above it).
    public static let maxBytes = 4096
    /// APNs' limit for a broadcast body (`POST /4/broadcasts/apps/…`, 413 `PayloadTooLarge` above it). ActivityKit
    /// still caps a Live Activity's static and dynamic data at 4 KB together (docs/apns.md §9.4).
    public static let broadcastBodyLimit = 5120

    /// The JSON, keys sorted, ready to send.
    public var json: Data
    /// Optional fields left out to fit, as dotted paths (`aps.content-state.lockScreen.detail`), in drop order.
    public var droppedFields: [String]
    /// When texts had to be cut to fit: the largest number of JSON bytes any one text kept; nil when none was.
    public var textByteCap: Int?

    public init(json: Data, droppedFields: [String] = [], textByteCap: Int? = nil) {
        self.json = json
        self.droppedFields = droppedFields
        self.textByteCap = textByteCap
    }

    /// The JSON as text (it is always valid UTF-8).
    public var string: String { String(decoding: json, as: UTF8.self) }
}
