public import Foundation

/// The `apns-collapse-id` of every push-to-start (push-anchors P8): a start whose answer was lost is sent again
/// (at-least-once, rightly), and without a collapse id the phone shows two Live Activities for one order. With one
/// derived from what the start starts, the second copy replaces the first on the device. APNs refuses ids over 64 bytes
/// (`BadCollapseId`), so each is short whatever the inputs.
public enum StartCollapseID {
    /// An order's start: `start-<order id>` (42 bytes).
    public static func order(_ orderID: UUID) -> String {
        "start-" + orderID.uuidString.lowercased()
    }

    /// A store board's start for one customer: `board-` and 16 hex digits of a 64-bit FNV-1a hash of the store and the
    /// customer ref (22 bytes). A hash, because a store id and a ref together can exceed 64 bytes and the ref is the
    /// shop's own identifier, which Apple need not see; a collision could only merge two starts on one device.
    public static func board(store: String, customerRef: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(store.utf8) + [0] + Array(customerRef.utf8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "board-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
