public import Foundation

/// A webhook receiver's URL, checked for what can be known without the network: http or https, a host, no user
/// info, no fragment, at most 2,048 bytes. Whether the host is a private address is `WebhookAddress`'s, after DNS.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    public let url: URL
    public let host: String
    public let isHTTPS: Bool
    public let port: Int

    /// Why a URL cannot be a receiver; the sentence names the fix.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed
        case scheme(String)
        case userInfo
        case fragment
        case tooLong

        public var description: String {
            switch self {
            case .malformed: "is not an absolute URL with a host"
            case .scheme(let scheme): "has scheme \"\(scheme)\"; only https (or http) receivers are supported"
            case .userInfo: "must not carry a user name or password; authenticate the request by its Crema-Signature"
            case .fragment: "must not have a #fragment (it is never sent)"
            case .tooLong: "is longer than 2048 bytes"
            }
        }
    }

    public init(_ text: String) throws(Refusal) {
        guard text.utf8.count <= 2048 else { throw .tooLong }
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else { throw .malformed }
        guard scheme == "https" || scheme == "http" else { throw .scheme(scheme) }
        guard var host = components.host, !host.isEmpty else { throw .malformed }
        guard components.user == nil, components.password == nil else { throw .userInfo }
        guard components.fragment == nil else { throw .fragment }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let port = components.port, !(1...65535).contains(port) { throw .malformed }
        // Kept as a receiver would be written: scheme and host in lower case (both are case-insensitive).
        components.scheme = scheme
        if components.host?.hasPrefix("[") == false { components.host = components.host?.lowercased() }
        guard let url = components.url else { throw .malformed }
        self.url = url
        self.host = host.lowercased()
        self.isHTTPS = scheme == "https"
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    public var description: String { url.absoluteString }
}
