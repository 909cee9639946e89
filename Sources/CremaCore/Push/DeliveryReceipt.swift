public import Foundation
import CremaAPNsProtocol

/// The receipt a push carries (`"crema":{"receipt":…}`, and in Live Activity content states `receipt`): an opaque
/// string naming one delivery, which the phone posts back (`POST /v1/me/receipts`) when the push reached it.
///
/// The planner writes every body before its outbox row has an id, so it writes `placeholder`, exactly as long as
/// a real receipt: the fitter counts the receipt's bytes, and the dispatcher puts the real one in its place
/// (`filling(_:with:)`) when it sends, with no refitting. The wire form is base64url of the delivery id (8 bytes,
/// big-endian), the order id (16 bytes, so the delivery is found by the order's index) and a tag of `tagLength`
/// bytes; the tag is the first bytes of an HMAC-SHA256 under a key derived from `CREMA_MASTER_KEY` over
/// `message(tenant:deliveryID:orderID:)`, computed at the edge (`DeliveryReceiptKey`): the core holds no key.
public struct DeliveryReceipt: Sendable, Hashable {
    public var deliveryID: Int64
    public var orderID: UUID
    public var tag: [UInt8]

    /// 16 bytes of HMAC-SHA256: guessing one is 1 in 2^128.
    public static let tagLength = 16
    static let byteCount = 8 + 16 + tagLength
    /// Characters of a receipt: base64url of 40 bytes, no padding.
    public static let length = (byteCount * 4 + 2) / 3
    /// What a body holds until its delivery is sent: as long as a receipt, and never a valid one.
    public static let placeholder = String(repeating: "A", count: length)

    public init(deliveryID: Int64, orderID: UUID, tag: [UInt8]) {
        self.deliveryID = deliveryID
        self.orderID = orderID
        self.tag = tag
    }

    /// Reads a receipt's fields; nil for anything that is not one (its tag is not checked here).
    public init?(text: String) {
        guard text.utf8.count == Self.length, let data = Base64URL.decode(text), data.count == Self.byteCount else { return nil }
        let bytes = Array(data)
        deliveryID = bytes[0..<8].reduce(0) { $0 << 8 | Int64($1) }
        let uuid = bytes[8..<24]
        orderID = UUID(uuid: (
            uuid[8], uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15],
            uuid[16], uuid[17], uuid[18], uuid[19], uuid[20], uuid[21], uuid[22], uuid[23]))
        tag = Array(bytes[24...])
    }

    /// The receipt's wire form.
    public var text: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: deliveryID >> Int64(shift))) }
        withUnsafeBytes(of: orderID.uuid) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: tag.prefix(Self.tagLength))
        return Base64URL.encode(bytes)
    }

    /// What the tag authenticates: the tenant, the delivery and its order, each unambiguous (the tenant's length first).
    public static func message(tenant: String, deliveryID: Int64, orderID: UUID) -> [UInt8] {
        var bytes = Array("crema-receipt-v1".utf8)
        let tenantBytes = Array(tenant.utf8)
        bytes.append(UInt8(truncatingIfNeeded: tenantBytes.count))
        bytes.append(contentsOf: tenantBytes)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: deliveryID >> Int64(shift))) }
        withUnsafeBytes(of: orderID.uuid) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// `body` with every `"receipt":"<placeholder>"` holding `receipt` instead: same length, so a body that fitted
    /// still fits. The placeholder is only ever written as a whole JSON member by the body builder; text from an order
    /// cannot contain it as a member, since a quote inside a JSON string is escaped.
    public static func filling(_ body: String, with receipt: String) -> String {
        precondition(receipt.utf8.count == length, "a receipt is \(length) characters")
        return body.replacingOccurrences(of: member(placeholder), with: member(receipt))
    }

    static func member(_ value: String) -> String { #""receipt":""# + value + #"""# }
}
