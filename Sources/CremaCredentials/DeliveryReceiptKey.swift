public import CremaCore
import Crypto
public import Foundation

/// Makes and opens the receipts pushes carry (`DeliveryReceipt`), with two keys derived from `CREMA_MASTER_KEY`, so
/// every process of a deployment makes the same receipt for a delivery and no one without the key can make one for a
/// delivery that is not theirs. A synthetic-IV construction: the tag is an HMAC-SHA256 over the tenant and the fields,
/// and the fields are sealed with a pad drawn from the tag under the second key, so a receipt shows neither the order
/// nor the delivery id (which would tell a customer how many pushes the deployment sends). The keys are never stored,
/// printed or logged; without a master key there is none, and pushes keep the placeholder, which never opens.
public struct DeliveryReceiptKey: Sendable, CustomStringConvertible {
    private let tagKey: SymmetricKey
    private let padKey: SymmetricKey

    public init(masterKey: MasterKey) {
        tagKey = masterKey.derivedKey(purpose: "crema delivery receipts v1: tag")
        padKey = masterKey.derivedKey(purpose: "crema delivery receipts v1: pad")
    }

    /// The receipt of delivery `deliveryID` of `orderID`, for a push of `tenant`.
    public func receipt(tenant: String, deliveryID: Int64, orderID: UUID) -> String {
        let fields = DeliveryReceipt(deliveryID: deliveryID, orderID: orderID).fields
        let tag = self.tag(tenant: tenant, fields: fields)
        return DeliveryReceipt.text(sealed: zip(fields, pad(tag)).map { $0 ^ $1 }, tag: tag)
    }

    /// The delivery a receipt names, when it is one this key made for `tenant`; nil for anything else (another
    /// tenant's, altered, the placeholder, not a receipt at all).
    public func open(_ text: String, tenant: String) -> DeliveryReceipt? {
        guard let (sealed, tag) = DeliveryReceipt.parts(of: text) else { return nil }
        let fields = zip(sealed, pad(tag)).map { $0 ^ $1 }
        let expected = self.tag(tenant: tenant, fields: fields)
        // Constant time: every byte is compared whatever the first difference.
        guard expected.count == tag.count, zip(expected, tag).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
        return DeliveryReceipt(fields: fields)
    }

    private func tag(tenant: String, fields: [UInt8]) -> [UInt8] {
        Array(Array(HMAC<SHA256>.authenticationCode(for: DeliveryReceipt.message(tenant: tenant, fields: fields), using: tagKey))
            .prefix(DeliveryReceipt.tagLength))
    }

    private func pad(_ tag: [UInt8]) -> [UInt8] {
        Array(Array(HMAC<SHA256>.authenticationCode(for: tag, using: padKey)).prefix(DeliveryReceipt.fieldsLength))
    }

    public var description: String { "DeliveryReceiptKey(redacted)" }
}
