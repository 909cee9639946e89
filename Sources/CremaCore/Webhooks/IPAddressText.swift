#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// IP addresses between text and bytes (inet_pton/inet_ntop: pure conversions, no network).
public enum IPAddressText {
    /// The 4 or 16 bytes of an IPv4 or IPv6 literal; nil for anything else (a host name).
    public static func bytes(_ text: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, text, &v6) == 1 { return v6 }
        return nil
    }

    public static func text(_ bytes: [UInt8]) -> String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: 64)
        guard bytes.count == 4 || bytes.count == 16, inet_ntop(family, bytes, &buffer, 64) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
