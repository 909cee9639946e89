public import Foundation
import CremaAPNsProtocol

/// The receipt a push carries (`"crema":{"receipt":…}`, and in Live Activity content states `receipt`): an opaque
/// string naming one delivery, which the phone posts back (`POST /v1/me/receipts`) when the push reached it.
///
/// The planner writes every body before its outbox row has an id, so it writes `placeholder`, exactly as long as
/// a real receipt: the fitter counts the receipt's bytes, and the dispatcher puts the real one in its place
/// (`filling(_:with:)`) when it sends, with no refitting. The wire form is base64url of 24 sealed bytes (the delivery
/// id, big-endian, and the order id, so the delivery is found by the order's index) and a 16-byte tag. Sealing is
/// the edge's (`DeliveryReceiptKey`, a synthetic-IV construction over HMAC-SHA256): the core only lays the bytes out
/// and holds no key. Sealed, a receipt shows neither ids nor how many pushes came before it.
public struct DeliveryReceipt: Sendable, Hashable {
    public var deliveryID: Int64
    public var orderID: UUID

    /// 16 bytes of HMAC-SHA256: guessing one is 1 in 2^128.
    public static let tagLength = 16
    /// The delivery id and the order id.
    public static let fieldsLength = 8 + 16
    /// Characters of a receipt: base64url of 40 bytes, no padding.
    public static let length = ((fieldsLength + tagLength) * 4 + 2) / 3
    /// What a body holds until its delivery is sent: as long as a receipt, and never a valid one.
    public static let placeholder = String(repeating: "A", count: length)

    public init(deliveryID: Int64, orderID: UUID) {
        self.deliveryID = deliveryID
        self.orderID = orderID
    }

    /// The fields as the 24 bytes a receipt seals.
    public var fields: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.fieldsLength)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: deliveryID >> Int64(shift))) }
        withUnsafeBytes(of: orderID.uuid) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Reads the fields back from their 24 bytes.
    public init?(fields bytes: [UInt8]) {
        guard bytes.count == Self.fieldsLength else { return nil }
        deliveryID = bytes[0..<8].reduce(0) { $0 << 8 | Int64($1) }
        let u = Array(bytes[8..<24])
        orderID = UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))
    }

    /// What the tag authenticates: the tenant (its length first, so no two tenants' messages meet) and the fields.
    public static func message(tenant: String, fields: [UInt8]) -> [UInt8] {
        let tenantBytes = Array(tenant.utf8)
        return Array("crema-receipt-v1".utf8) + [UInt8(truncatingIfNeeded: tenantBytes.count)] + tenantBytes + fields
    }

    /// The wire form of sealed fields and their tag.
    public static func text(sealed: [UInt8], tag: [UInt8]) -> String {
        Base64URL.encode(sealed.prefix(fieldsLength) + tag.prefix(tagLength))
    }

    /// The sealed fields and the tag of a receipt's text; nil for text that cannot be one.
    public static func parts(of text: String) -> (sealed: [UInt8], tag: [UInt8])? {
        guard text.utf8.count == length, let data = Base64URL.decode(text), data.count == fieldsLength + tagLength else { return nil }
        let bytes = Array(data)
        return (Array(bytes[..<fieldsLength]), Array(bytes[fieldsLength...]))
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
