import CremaAPNsProtocol
import Foundation
import Synchronization

/// The channels the simulator keeps, per app, in creation order. The simulator cannot tell the environments apart
/// (one URL serves both when `CREMA_APNS_URL` points at it), so each app has one set and one limit where APNs has
/// one per environment.
final class SimulatorChannels: Sendable {
    /// Why a channel could not be created.
    enum CreateFailure: Error, Equatable {
        /// The app already has `limit` channels.
        case limitReached(limit: Int)
    }

    /// The most channels one app may hold (APNs: 10,000 per app and environment).
    let limit: Int
    private let channels = Mutex<[String: [APNsSimulatorChannel]]>([:])

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// A new channel with a random id, or the limit refusal.
    func create(bundleID: String, storage: APNsChannelStorage, now: Date) -> Result<APNsSimulatorChannel, CreateFailure> {
        channels.withLock { channels in
            guard channels[bundleID, default: []].count < limit else { return .failure(.limitReached(limit: limit)) }
            let channel = APNsSimulatorChannel(
                id: Data([UInt8].random(count: 16)).base64EncodedString(), bundleID: bundleID, storage: storage,
                createdAt: now)
            channels[bundleID, default: []].append(channel)
            return .success(channel)
        }
    }

    /// The app's channel with this id; nil when it has none (another app's channel is not found either).
    func find(_ id: String, bundleID: String) -> APNsSimulatorChannel? {
        channels.withLock { $0[bundleID]?.first { $0.id == id } }
    }

    /// Deletes the app's channel; false when it had none with this id.
    func delete(_ id: String, bundleID: String) -> Bool {
        channels.withLock { channels in
            guard let index = channels[bundleID]?.firstIndex(where: { $0.id == id }) else { return false }
            channels[bundleID]?.remove(at: index)
            return true
        }
    }

    /// Forgets a channel of whichever app holds it, as when APNs loses one; false when none has this id.
    func forget(_ id: String) -> Bool {
        channels.withLock { channels in
            for (bundleID, held) in channels {
                if let index = held.firstIndex(where: { $0.id == id }) {
                    channels[bundleID]?.remove(at: index)
                    return true
                }
            }
            return false
        }
    }

    /// The app's channels, oldest first.
    func list(bundleID: String) -> [APNsSimulatorChannel] {
        channels.withLock { $0[bundleID] ?? [] }
    }

    /// Every app's channels, by app and then oldest first.
    func all() -> [APNsSimulatorChannel] {
        channels.withLock { channels in channels.keys.sorted().flatMap { channels[$0] ?? [] } }
    }
}
