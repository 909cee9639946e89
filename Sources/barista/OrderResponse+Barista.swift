import CremaAPI
import Foundation

extension OrderResponse {
    /// The id as the API writes it (lowercase), for paths and messages.
    var idText: String { id.uuidString.lowercased() }
}
