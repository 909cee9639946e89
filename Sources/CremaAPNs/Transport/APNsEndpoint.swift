import Foundation

/// Where one APNs base URL points: the host and port to connect to, the `:authority` to name, and the path
/// prefix (empty for Apple) that `/3/device/<token>` follows.
struct APNsEndpoint: Sendable, Hashable {
    var host: String
    var port: Int
    var authority: String
    var pathPrefix: String

    init(_ url: URL) throws(APNsClientError) {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw .invalidRequest("APNs base URL \(url.absoluteString) is not an https URL with a host")
        }
        self.host = host
        port = url.port ?? 443
        authority = url.port.map { "\(host):\($0)" } ?? host
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        pathPrefix = path
    }
}
