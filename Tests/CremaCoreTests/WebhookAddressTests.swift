import CremaCore
import Testing

/// Which addresses may receive webhooks (server-side request forgery) and which URLs can be receivers at all.
@Suite struct WebhookAddressTests {
    @Test(
        "Private, loopback, link-local, shared, reserved and documentation addresses are refused",
        arguments: [
            "0.0.0.0", "10.0.0.1", "127.0.0.1", "100.64.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.168.1.1", "192.0.0.8",
            "192.0.2.1", "198.18.0.1", "198.51.100.7", "203.0.113.9", "224.0.0.1", "255.255.255.255", "::", "::1", "fc00::1", "fd12::1",
            "fe80::1", "ff02::1", "2001:db8::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "64:ff9b::a00:1",
            // Local-use NAT64 reaches the network's own translator; IPv4-translated embeds a private address.
            "64:ff9b:1::808:808", "64:ff9b:1:ffff::1", "::ffff:0:a00:1", "::ffff:0:7f00:1",
        ])
    func privateAddressesAreRefused(_ text: String) throws {
        let bytes = try #require(IPAddressText.bytes(text))
        #expect(!WebhookAddress.isPublic(bytes), "\(text)")
    }

    @Test("Public addresses are allowed", arguments: ["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "::ffff:0:808:808"])
    func publicAddressesAreAllowed(_ text: String) throws {
        let bytes = try #require(IPAddressText.bytes(text))
        #expect(WebhookAddress.isPublic(bytes), "\(text)")
        #expect(IPAddressText.bytes(IPAddressText.text(bytes)) == bytes)
    }

    @Test("A host name is not an address literal")
    func hostNamesAreNotLiterals() {
        #expect(IPAddressText.bytes("hooks.example.com") == nil)
        #expect(IPAddressText.bytes("127.1") == nil)
    }

    @Test("A receiver URL is http or https with a host, no user info and no fragment; its port defaults by scheme")
    func urls() throws {
        let https = try WebhookURL("https://Hooks.Example.com/crema?x=1")
        #expect(https.host == "hooks.example.com")
        #expect(https.port == 443 && https.isHTTPS)
        let http = try WebhookURL("http://[::1]:8080/x")
        #expect(http.host == "::1" && http.port == 8080 && !http.isHTTPS)
        #expect(try WebhookURL("HTTPS://Hooks.Example.com/Path").description == "https://hooks.example.com/Path")
        #expect(throws: WebhookURL.Refusal.scheme("ftp")) { try WebhookURL("ftp://example.com/") }
        #expect(throws: WebhookURL.Refusal.userInfo) { try WebhookURL("https://a:b@example.com/") }
        #expect(throws: WebhookURL.Refusal.fragment) { try WebhookURL("https://example.com/#x") }
        #expect(throws: WebhookURL.Refusal.malformed) { try WebhookURL("example.com/hooks") }
        #expect(throws: WebhookURL.Refusal.tooLong) { try WebhookURL("https://example.com/" + String(repeating: "a", count: 2048)) }
    }
}
