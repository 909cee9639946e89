public import CremaCore

/// What managing a store's channel asks of APNs' channel-management API. The HTTP side reaches APNs only through
/// this (implemented over the APNs client in CremaDelivery), so the server links no APNs transport.
public protocol BroadcastChannels: Sendable {
    /// Creates a Live Activity channel for the app in `environment` storing `storage` (`none` or `latest`); its id.
    func create(tenant: String, bundleID: String, environment: String, storage: String) async throws(BroadcastRefusal) -> String
    /// Deletes a channel; one APNs no longer knows counts as deleted.
    func delete(_ channelID: String, tenant: String, bundleID: String, environment: String) async throws(BroadcastRefusal)
}
