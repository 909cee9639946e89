public import CremaAPNs
import CremaAPNsKey
import CremaAPNsProtocol
public import CremaCore
public import CremaService
import Foundation

/// Channel management over APNs' own API (its own host and port per environment), signed with the app's key from
/// the process's keyring: each tenant's channels with its own key.
public struct APNsBroadcastChannels: BroadcastChannels {
    let client: APNsClient
    let keyring: SigningKeyring

    public init(client: APNsClient, keyring: SigningKeyring) {
        self.client = client
        self.keyring = keyring
    }

    public func create(tenant: String, bundleID: String, environment: String, storage: String) async throws(BroadcastRefusal) -> String {
        let (key, environment) = try lane(tenant: tenant, bundleID: bundleID, environment: environment)
        guard let storage = APNsChannelStorage(rawValue: storage) else { throw .apnsRefused(status: 400, reason: "BadRequestParams") }
        let answer: APNsChannelAnswer
        do {
            answer = try await client.createChannel(bundleID: bundleID, environment: environment, storage: storage, signedBy: key)
        } catch {
            throw .apnsUnavailable(error.code)
        }
        guard (200..<300).contains(answer.status), let id = answer.channelID, !id.isEmpty else { throw Self.refusal(answer) }
        return id
    }

    public func delete(_ channelID: String, tenant: String, bundleID: String, environment: String) async throws(BroadcastRefusal) {
        let (key, environment) = try lane(tenant: tenant, bundleID: bundleID, environment: environment)
        let answer: APNsChannelAnswer
        do {
            answer = try await client.deleteChannel(channelID, bundleID: bundleID, environment: environment, signedBy: key)
        } catch {
            throw .apnsUnavailable(error.code)
        }
        // A channel APNs no longer has is as deleted as it gets.
        switch APNsBroadcastDisposition(status: answer.status, reason: answer.reason, retryAfter: answer.retryAfter) {
        case .accepted, .channelGone: return
        case .retryLater, .configurationError, .channelLimit: break
        }
        throw Self.refusal(answer)
    }

    /// Every channel APNs holds for the app (the reconciliation's other side).
    func list(tenant: String, bundleID: String, environment: String) async throws(BroadcastRefusal) -> [String] {
        let (key, environment) = try lane(tenant: tenant, bundleID: bundleID, environment: environment)
        let answer: APNsChannelAnswer
        do {
            answer = try await client.listChannels(bundleID: bundleID, environment: environment, signedBy: key)
        } catch {
            throw .apnsUnavailable(error.code)
        }
        guard (200..<300).contains(answer.status) else { throw Self.refusal(answer) }
        return answer.channelIDs
    }

    private func lane(tenant: String, bundleID: String, environment: String) throws(BroadcastRefusal) -> (APNsSigningKey, APNsEnvironment) {
        // No key for the app here: this process cannot sign for it, as one that sends no pushes cannot.
        guard let key = keyring.key(for: bundleID, tenant: tenant) else { throw .unavailable }
        return (key, APNsEnvironment(rawValue: environment) ?? .production)
    }

    static func refusal(_ answer: APNsChannelAnswer) -> BroadcastRefusal {
        let reason = answer.reason ?? "HTTP \(answer.status)"
        switch APNsBroadcastDisposition(status: answer.status, reason: answer.reason, retryAfter: answer.retryAfter) {
        case .channelLimit: return .channelLimit
        case .retryLater: return .apnsUnavailable(reason)
        case .accepted, .channelGone, .configurationError: return .apnsRefused(status: answer.status, reason: reason)
        }
    }
}
