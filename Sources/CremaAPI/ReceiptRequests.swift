public import Foundation

/// `POST /v1/me/receipts`: receipts the app's code or its Notification Service Extension saw, up to 100 at a time.
public struct ReceiptsRequest: Codable, Sendable {
    public var receipts: [Item]

    /// One receipt: the `crema.receipt` (or content state's `receipt`) of a push, how the app saw it
    /// (`notification`, `activity` or `app`), and when (clamped to the delivery's lifetime by Crema).
    public struct Item: Codable, Sendable {
        public var receipt: String
        public var surface: String
        public var at: Date

        public init(receipt: String, surface: String, at: Date) {
            self.receipt = receipt
            self.surface = surface
            self.at = at
        }
    }

    public init(receipts: [Item]) { self.receipts = receipts }
}

/// What `POST /v1/me/receipts` answers (202): receipts that named a push of the caller (the first for each push is
/// kept, a repeat is counted here but changes nothing) and those that did not (not written).
public struct ReceiptsResponse: Codable, Sendable {
    public var accepted: Int
    public var unknown: Int

    public init(accepted: Int, unknown: Int) {
        self.accepted = accepted
        self.unknown = unknown
    }
}
