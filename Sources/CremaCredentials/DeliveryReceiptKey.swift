public import CremaCore
import Crypto
public import Foundation

/// Makes and checks the receipts pushes carry (`DeliveryReceipt`): HMAC-SHA256 under a key derived from
/// `CREMA_MASTER_KEY`, so every process of a deployment makes the same receipt for a delivery, and no one without the
/// key can make one for a delivery that is not theirs. The key is never stored, printed or logged; without a master
/// key there is no receipt key, and pushes keep the receipt's placeholder, which never opens.
public struct DeliveryReceiptKey: Sendable, CustomStringConvertible {
    private let key: SymmetricKey

    public init(masterKey: MasterKey) {
        key = masterKey.derivedKey(purpose: "crema delivery receipts v1")
    }

    /// The receipt of delivery `deliveryID` of `orderID`, for a push of `tenant`.
    public func receipt(tenant: String, deliveryID: Int64, orderID: UUID) -> String {
        DeliveryReceipt(deliveryID: deliveryID, orderID: orderID, tag: tag(tenant: tenant, deliveryID: deliveryID, orderID: orderID)).text
    }

    /// The delivery a receipt names, when it is one this key made for `tenant`; nil for anything else (another
    /// tenant's, altered, the placeholder, not a receipt at all).
    public func open(_ text: String, tenant: String) -> DeliveryReceipt? {
        guard let receipt = DeliveryReceipt(text: text) else { return nil }
        let expected = tag(tenant: tenant, deliveryID: receipt.deliveryID, orderID: receipt.orderID)
        // Constant time: every byte is compared whatever the first difference.
        guard expected.count == receipt.tag.count, zip(expected, receipt.tag).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
        return receipt
    }

    private func tag(tenant: String, deliveryID: Int64, orderID: UUID) -> [UInt8] {
        let message = DeliveryReceipt.message(tenant: tenant, deliveryID: deliveryID, orderID: orderID)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: key)).prefix(DeliveryReceipt.tagLength).map { $0 }
    }

    public var description: String { "DeliveryReceiptKey(redacted)" }
}
