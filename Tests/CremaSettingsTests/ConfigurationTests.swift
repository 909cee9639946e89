import CremaAPNsProtocol
import CremaCore
import CremaService
import CremaSettings
import Foundation
import Testing

@Suite struct ConfigurationTests {
    @Test("no database setting means the embedded cluster") func noDatabaseSettingMeansTheEmbeddedCluster() throws {
        let configuration = try CremaConfiguration(environment: [:])
        #expect(configuration.database == .embedded)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.apiKeys.isEmpty)
    }

    @Test("CREMA_WEBHOOK_ALLOW_PRIVATE is 1 or unset; anything else is refused naming the variable, and a CA file must be readable")
    func webhookSettings() throws {
        #expect(try CremaConfiguration(environment: [:]).webhookAllowsPrivateAddresses == false)
        #expect(try CremaConfiguration(environment: ["CREMA_WEBHOOK_ALLOW_PRIVATE": "1"]).webhookAllowsPrivateAddresses)
        #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: ["CREMA_WEBHOOK_ALLOW_PRIVATE": "yes"]) }
        #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: ["CREMA_WEBHOOK_CA_FILE": "/nonexistent/ca.pem"]) }
    }

    @Test("a database URLIs used as given") func aDatabaseURLIsUsedAsGiven() throws {
        let configuration = try CremaConfiguration(environment: ["CREMA_DATABASE_URL": "postgresql://u@db/crema", "PGHOST": "other"])
        #expect(configuration.database == .conninfo("postgresql://u@db/crema"))
    }

    @Test("libpq variables alone select that database", arguments: ["PGHOST", "PGDATABASE", "PGSERVICE"])
    func libpqVariablesAloneSelectThatDatabase(_ variable: String) throws {
        let configuration = try CremaConfiguration(environment: [variable: "x"])
        #expect(configuration.database == .conninfo(""))
    }

    @Test("the listen address and keys come from the environment") func theListenAddressAndKeysComeFromTheEnvironment() throws {
        let configuration = try CremaConfiguration(environment: [
            "CREMA_HTTP_HOST": "0.0.0.0", "CREMA_HTTP_PORT": "9000", "CREMA_API_KEYS": "pos:0123456789abcdef",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9000)
        #expect(configuration.apiKeys.principal(for: "0123456789abcdef") == APIPrincipal(role: .pos, tenant: "default", holder: "configured:pos-0"))
    }

    @Test("a bad port is refused naming the variable", arguments: ["http", "-1", "70000"]) func aBadPortIsRefusedNamingTheVariable(_ port: String) {
        let error = #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: ["CREMA_HTTP_PORT": port]) }
        #expect(error?.description.contains("CREMA_HTTP_PORT") == true)
    }

    @Test("a bad key list is refused without echoing the key") func aBadKeyListIsRefusedWithoutEchoingTheKey() {
        let error = #expect(throws: ConfigurationError.self) {
            try CremaConfiguration(environment: ["CREMA_API_KEYS": "pos:short-secret"])
        }
        #expect(error?.description.contains("short-secret") == false)
    }

    @Test("keys shorter than 16 characters do not stop a command that uses no keys (crema migrate, crema dispatch)",
          arguments: ["pos:k1,barista:k2", "pos:short-secret", "nonsense", ""])
    func aCommandThatUsesNoKeysIgnoresThem(_ keys: String) throws {
        let configuration = try CremaConfiguration(environment: ["CREMA_API_KEYS": keys], readsAPIKeys: false)
        #expect(configuration.apiKeys.isEmpty)
    }

    @Test("the example in the key error passes the rule it states") func theExampleInTheKeyErrorPassesTheRuleItStates() throws {
        let error = #expect(throws: ConfigurationError.self) { try CremaConfiguration(environment: ["CREMA_API_KEYS": "pos:k1,barista:k2"]) }
        let description = try #require(error?.description)
        #expect(!description.contains("k1"))
        let start = try #require(description.range(of: "e.g. ")).upperBound
        let end = try #require(description[start...].firstIndex(of: ")"))
        let keys = try APIKeys(parsing: String(description[start..<end]))
        #expect(keys.key(for: .pos) == "till-key-8f2a61c0d5e9")
        #expect(keys.key(for: .barista) == "bar-key-4b7a8c3e1f6d")
    }
}
