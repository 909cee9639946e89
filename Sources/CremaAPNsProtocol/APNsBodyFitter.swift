public import Foundation

/// Makes a draft body fit `APNsBody.maxBytes`: optional fields go first, one at a time in the caller's order,
/// then every text is cut to a shrinking number of bytes. Any app's body builder can use it; the caller
/// decides which fields are optional and how texts are cut.
public enum APNsBodyFitter {
    /// Per-text byte caps tried in turn once nothing optional is left; 0 leaves "…".
    public static let textByteCaps = [512, 256, 128, 64, 32, 16, 8, 0]

    /// - Parameters:
    ///   - drops: closures that each remove one optional field, returning whether there was one to remove.
    ///   - names: the dotted path of each drop, recorded in `droppedFields`.
    ///   - cap: cuts every text of a draft to a number of JSON bytes (`TextByteCap.cap`).
    public static func fit<Draft>(
        _ initial: Draft,
        drops: [(inout Draft) -> Bool],
        names: [String],
        cap: (inout Draft, Int) -> Void,
        encode: (Draft) -> Data
    ) -> APNsBody {
        var draft = initial
        var json = encode(draft)
        // Most bodies fit as drafted. Stepping through the drops only while one is too large is the whole rule: a body
        // that fits stays fitting. (Walking `zip(drops, names)` to the end, as this did, cost a body more than its
        // writing: this function is generic and not specialized, so every step went through the runtime.)
        if json.count <= APNsBody.maxBytes { return APNsBody(json: json) }
        var dropped: [String] = []
        var next = 0
        while json.count > APNsBody.maxBytes, next < min(drops.count, names.count) {
            if drops[next](&draft) {
                dropped.append(names[next])
                json = encode(draft)
            }
            next += 1
        }
        if json.count <= APNsBody.maxBytes { return APNsBody(json: json, droppedFields: dropped) }
        for limit in textByteCaps {
            var cut = draft
            cap(&cut, limit)
            json = encode(cut)
            if json.count <= APNsBody.maxBytes { return APNsBody(json: json, droppedFields: dropped, textByteCap: limit) }
        }
        preconditionFailure("an APNs body with every text cut to … still exceeds \(APNsBody.maxBytes) bytes")
    }
}
