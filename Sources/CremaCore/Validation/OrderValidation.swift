public import Foundation

/// Limits on what a POS or barista may send; the numbers are the API's documented limits.
public enum OrderValidation {
    public static let maxItems = 50
    public static let maxQuantity = 99
    public static let maxModifiers = 20
    /// How far an ETA may lie before `now` (POS clocks drift) and after it.
    public static let etaPast: TimeInterval = 60 * 60
    public static let etaFuture: TimeInterval = 24 * 60 * 60

    /// Checks a placement's fields; `OrderStateMachine.place` runs it too, callers may run it earlier.
    public static func validate(_ placement: OrderPlacement, now: Date) throws(OrderError) {
        try StoreID.validate(placement.storeID, field: "store_id")
        try text(placement.posRef, field: "pos_ref", max: 64)
        if let customerRef = placement.customerRef { try self.customerRef(customerRef) }
        try text(placement.displayName, field: "display_name", max: 80)
        guard !placement.items.isEmpty else { throw .invalidValue(field: "items", reason: "must hold at least one item") }
        guard placement.items.count <= maxItems else {
            throw .invalidValue(field: "items", reason: "must hold at most \(maxItems) items")
        }
        for (index, item) in placement.items.enumerated() {
            let prefix = "items[\(index)]"
            try text(item.name, field: "\(prefix).name", max: 120)
            if let size = item.size { try text(size, field: "\(prefix).size", max: 40) }
            guard (1...maxQuantity).contains(item.quantity) else {
                throw .invalidValue(field: "\(prefix).quantity", reason: "must be between 1 and \(maxQuantity)")
            }
            guard item.modifiers.count <= maxModifiers else {
                throw .invalidValue(field: "\(prefix).modifiers", reason: "must hold at most \(maxModifiers) modifiers")
            }
            for (m, modifier) in item.modifiers.enumerated() {
                try text(modifier, field: "\(prefix).modifiers[\(m)]", max: 80)
            }
        }
        try eta(placement.eta, now: now)
    }

    static func validate(_ event: OrderEvent, order: Order, now: Date) throws(OrderError) {
        switch event {
        case .started(let barista):
            try text(barista, field: "barista", max: 60)
        case .delayed(let newETA, let reason):
            try eta(newETA, now: now)
            if let reason { try text(reason, field: "reason", max: 200) }
        case .ready(let pickupPoint):
            if let pickupPoint { try text(pickupPoint, field: "pickup_point", max: 40) }
        case .pickedUp:
            break
        case .canceled(let reason):
            try text(reason, field: "reason", max: 200)
        case .expired(let reason):
            // Each reason names the state it ends: `never_started` a queued order, `not_collected` a ready one.
            guard reason.expiredState == order.state else {
                throw .invalidTransition(from: order.state, event: .expired, allowed: order.allowedEvents)
            }
        }
    }

    /// Non-blank, no control characters, at most `max` characters (Unicode code points).
    /// A customer reference, as in `placed` and the customer token routes.
    /// A customer ref names the customer in paths (`DELETE /v1/customers/{ref}`, its tokens' routes), where a slash
    /// cannot be sent: a ref holding one could never be erased, so it is refused where it enters.
    public static func customerRef(_ value: String) throws(OrderError) {
        try text(value, field: "customer_ref", max: 128)
        if value.utf8.contains(UInt8(ascii: "/")) {
            throw .invalidValue(field: "customer_ref", reason: "must not contain '/' (the ref names the customer in paths such as DELETE /v1/customers/{ref})")
        }
    }

    static func text(_ value: String, field: String, max: Int) throws(OrderError) {
        // One printable ASCII byte settles it without asking Foundation to trim (every event checks several texts).
        let hasVisibleASCII = value.utf8.contains { $0 > 0x20 && $0 < 0x7F }
        if !hasVisibleASCII, value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw .invalidValue(field: field, reason: "must not be blank")
        }
        // Code points, as JSON Schema's maxLength counts them, so the document states the exact limit.
        if value.unicodeScalars.count > max { throw .invalidValue(field: field, reason: "must be at most \(max) characters") }
        // General category Cc, which is exactly C0, DEL and C1: no property lookup needed.
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw .invalidValue(field: field, reason: "must not contain control characters")
        }
    }

    static func eta(_ value: Date, now: Date) throws(OrderError) {
        guard value >= now.addingTimeInterval(-etaPast), value <= now.addingTimeInterval(etaFuture) else {
            throw .invalidValue(field: "eta", reason: "must be within one hour before and 24 hours after now")
        }
    }
}
