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
    private let apps = Mutex<[String: App]>([:])

    /// One app's channels: found by id without a scan (a broadcast looks its channel up every time), listed in
    /// creation order.
    private struct App {
        var byID: [String: APNsSimulatorChannel] = [:]
        var order: [String] = []

        mutating func remove(_ id: String) -> Bool {
            guard byID.removeValue(forKey: id) != nil else { return false }
            order.removeAll { $0 == id }
            return true
        }
    }

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// A new channel with a random id, or the limit refusal.
    func create(bundleID: String, storage: APNsChannelStorage, now: Date) -> Result<APNsSimulatorChannel, CreateFailure> {
        apps.withLock { apps in
            guard apps[bundleID, default: App()].order.count < limit else { return .failure(.limitReached(limit: limit)) }
            let channel = APNsSimulatorChannel(
                id: Data([UInt8].random(count: 16)).base64EncodedString(), bundleID: bundleID, storage: storage,
                createdAt: now)
            apps[bundleID, default: App()].byID[channel.id] = channel
            apps[bundleID, default: App()].order.append(channel.id)
            return .success(channel)
        }
    }

    /// The app's channel with this id; nil when it has none (another app's channel is not found either).
    func find(_ id: String, bundleID: String) -> APNsSimulatorChannel? {
        apps.withLock { $0[bundleID]?.byID[id] }
    }

    /// Deletes the app's channel; false when it had none with this id.
    func delete(_ id: String, bundleID: String) -> Bool {
        apps.withLock { apps in apps[bundleID]?.remove(id) ?? false }
    }

    /// Forgets a channel of whichever app holds it, as when APNs loses one; false when none has this id.
    func forget(_ id: String) -> Bool {
        apps.withLock { apps in
            guard let bundleID = apps.first(where: { $0.value.byID[id] != nil })?.key else { return false }
            return apps[bundleID]?.remove(id) ?? false
        }
    }

    /// The app's channels, oldest first.
    func list(bundleID: String) -> [APNsSimulatorChannel] {
        apps.withLock { apps in
            guard let app = apps[bundleID] else { return [] }
            return app.order.compactMap { app.byID[$0] }
        }
    }

    /// Every app's channels, by app and then oldest first.
    func all() -> [APNsSimulatorChannel] {
        apps.withLock { apps in
            apps.keys.sorted().flatMap { bundleID in apps[bundleID].map { app in app.order.compactMap { app.byID[$0] } } ?? [] }
        }
    }
}
