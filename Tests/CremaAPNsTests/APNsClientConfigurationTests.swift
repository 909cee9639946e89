import CremaAPNs
import CremaAPNsProtocol
import Foundation
import Testing

@Suite("Where the client sends device pushes, broadcasts and channel calls")
struct APNsClientConfigurationTests {
    @Test("Apple's hosts are the defaults: broadcasts on the push hosts, channels on their own hosts and ports")
    func appleDefaults() {
        let configuration = APNsClientConfiguration()
        #expect(configuration.baseURL(for: .production).absoluteString == "https://api.push.apple.com")
        #expect(configuration.broadcastURL(for: .production).absoluteString == "https://api.push.apple.com")
        #expect(configuration.broadcastURL(for: .sandbox).absoluteString == "https://api.sandbox.push.apple.com")
        #expect(configuration.channelsURL(for: .production).absoluteString == "https://api-manage-broadcast.push.apple.com:2196")
        #expect(configuration.channelsURL(for: .sandbox).absoluteString == "https://api-manage-broadcast.sandbox.push.apple.com:2195")
    }

    @Test("One server takes everything, and the broadcast and channel URLs can each move on their own")
    func singleServerAndOverrides() throws {
        let simulator = try #require(URL(string: "https://127.0.0.1:9443"))
        var configuration = APNsClientConfiguration.singleServer(simulator)
        for environment in APNsEnvironment.allCases {
            #expect(configuration.baseURL(for: environment) == simulator)
            #expect(configuration.broadcastURL(for: environment) == simulator)
            #expect(configuration.channelsURL(for: environment) == simulator)
        }
        let broadcasts = try #require(URL(string: "https://api-broadcast.push.apple.com"))
        let channels = try #require(URL(string: "https://channels.example:2196"))
        configuration.sendBroadcasts(to: broadcasts)
        configuration.manageChannels(at: channels)
        for environment in APNsEnvironment.allCases {
            #expect(configuration.baseURL(for: environment) == simulator)
            #expect(configuration.broadcastURL(for: environment) == broadcasts)
            #expect(configuration.channelsURL(for: environment) == channels)
        }
    }
}
