import CremaAPI
import Foundation
import Hummingbird

extension CremaRequestContext {
    /// A path parameter as the client meant it: Hummingbird matches and hands over the raw, still
    /// percent-encoded segment, so every route reads its parameters here (`caf%C3%A9-7` is `café-7`).
    /// An encoded slash or a broken escape is a 400 naming the parameter.
    func pathParameter(_ name: String) throws(APIError) -> String {
        try PathParameter.decode(parameters.get(name) ?? "", name: name)
    }
}

/// Percent-decoding of one path segment, refusing what would make a segment mean two things.
enum PathParameter {
    static func decode(_ raw: String, name: String) throws(APIError) -> String {
        // Most segments (order ids, store ids) hold no escape at all: nothing to decode, nothing to refuse.
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        // `%2F` would turn one segment into a value with a slash in it: a name no path can address again.
        if raw.range(of: "%2f", options: .caseInsensitive) != nil {
            throw .invalidField(field: name, reason: "must not contain an encoded slash (%2F)")
        }
        guard let decoded = raw.removingPercentEncoding else {
            throw .invalidField(field: name, reason: "has a malformed percent-encoding (each % takes two hex digits of UTF-8)")
        }
        return decoded
    }
}
