/// Whether an IP address may receive webhooks: private, loopback, link-local, shared, multicast and reserved
/// ranges are refused unless `CREMA_WEBHOOK_ALLOW_PRIVATE=1`, so a registered URL cannot reach inside the network
/// Crema runs in (server-side request forgery).
public enum WebhookAddress {
    /// True for an address on the public internet. `bytes` is 4 (IPv4) or 16 (IPv6) bytes in network order.
    public static func isPublic(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return isPublicIPv4(bytes)
        case 16: return isPublicIPv6(bytes)
        default: return false
        }
    }

    private static func isPublicIPv4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): return false  // this network, private, loopback
        case (100, 64...127): return false  // shared address space (carrier-grade NAT)
        case (169, 254): return false  // link-local (cloud metadata services live here)
        case (172, 16...31), (192, 168): return false  // private
        case (198, 18...19): return false  // benchmarking
        case (192, 0) where b[2] == 0 || b[2] == 2: return false  // IETF protocol assignments, documentation
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return false  // documentation
        case (224...255, _): return false  // multicast, reserved, broadcast
        default: return true
        }
    }

    private static func isPublicIPv6(_ b: [UInt8]) -> Bool {
        let first10 = b[0..<10].allSatisfy { $0 == 0 }
        // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms are judged by their IPv4 address.
        if first10, b[10] == 0xff, b[11] == 0xff { return isPublicIPv4(Array(b[12..<16])) }
        if first10, b[10] == 0, b[11] == 0 { return false }  // ::, ::1 and the deprecated compatible range
        // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765) reaches the IPv4 address it embeds, as a mapped one does.
        if b[0..<8].allSatisfy({ $0 == 0 }), b[8] == 0xff, b[9] == 0xff, b[10] == 0, b[11] == 0 { return isPublicIPv4(Array(b[12..<16])) }
        // Local-use NAT64 (64:ff9b:1::/48, RFC 8215): a network's own translator, reaching whatever it was set up for.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4] == 0x00, b[5] == 0x01 { return false }
        // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4..<12].allSatisfy({ $0 == 0 }) {
            return isPublicIPv4(Array(b[12..<16]))
        }
        if b[0] & 0xfe == 0xfc { return false }  // unique local fc00::/7
        if b[0] == 0xfe, b[1] & 0xc0 == 0x80 { return false }  // link-local fe80::/10
        if b[0] == 0xfe, b[1] & 0xc0 == 0xc0 { return false }  // site-local fec0::/10 (deprecated)
        if b[0] == 0xff { return false }  // multicast
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return false }  // documentation 2001:db8::/32
        return true
    }
}
