import CremaClock
import Foundation

/// The simulator's own HTTP API under `/sim/` (no JWT, HTTP/1.1 or HTTP/2), so scripts and `curl` can read
/// what was sent and script faults:
///
/// - `GET /sim/health` → `{"status":"ok","records":n,"faults":n,"held":n}`
/// - `GET /sim/requests[?token=<hex>|?channel=<id>]` → the records, oldest first (with `channel`: the broadcasts
///   to that channel); `DELETE /sim/requests` clears them
/// - `GET /sim/channels` → every app's broadcast channels (`id`, `bundleID`, `storage`, `createdAt`)
/// - `GET /sim/faults`; `POST /sim/faults` with one ``APNsSimulatorFault`` as JSON; `DELETE /sim/faults` clears them
/// - `POST /sim/release` → `{"released":n}`: answers every request a `hold` fault holds
struct ControlAPI {
    let core: SimulatorCore

    func handle(_ exchange: SimulatorExchange) -> SimulatorCore.Reply {
        switch (exchange.method, exchange.path) {
        case ("GET", "/sim/health"):
            return json(
                200, [
                    "status": "ok", "records": core.records(token: nil).count, "faults": core.faults().count,
                    "held": core.heldCount(),
                ])
        case ("GET", "/sim/requests"):
            if let channel = exchange.query("channel") { return encoded(200, core.records(channel: channel)) }
            return encoded(200, core.records(token: exchange.query("token")))
        case ("GET", "/sim/channels"):
            return encoded(200, core.channels.all())
        case ("DELETE", "/sim/requests"):
            core.clearRecords()
            return .respond(status: 204, headers: [], body: Data())
        case ("GET", "/sim/faults"):
            return encoded(200, core.faults())
        case ("POST", "/sim/faults"):
            do {
                let decoder = JSONDecoder()
                decoder.userInfo[APNsSimulatorFault.now] = core.clock.now
                let fault = try decoder.decode(APNsSimulatorFault.self, from: exchange.body)
                core.inject(fault)
                return encoded(201, core.faults())
            } catch {
                return json(400, ["error": "invalid_fault", "message": "\(error)"])
            }
        case ("DELETE", "/sim/faults"):
            core.clearFaults()
            return .respond(status: 204, headers: [], body: Data())
        case ("POST", "/sim/release"):
            return json(200, ["released": core.releaseHeld()])
        case (_, "/sim/health"), (_, "/sim/requests"), (_, "/sim/faults"), (_, "/sim/release"), (_, "/sim/channels"):
            return json(
                405,
                ["error": "method_not_allowed", "message": "\(exchange.method) is not allowed on \(exchange.path)"])
        default:
            return json(404, ["error": "not_found", "message": "routes: /sim/health, /sim/requests, /sim/channels, /sim/faults, /sim/release"])
        }
    }

    private func json(_ status: Int, _ object: [String: Any]) -> SimulatorCore.Reply {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return .respond(status: status, headers: [("content-type", "application/json")], body: body)
    }

    private func encoded(_ status: Int, _ value: some Encodable) -> SimulatorCore.Reply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Milliseconds matter: benchmarks time deliveries by `receivedAt` (`.iso8601` would drop the fraction).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        let body = (try? encoder.encode(value)) ?? Data("[]".utf8)
        return .respond(status: status, headers: [("content-type", "application/json")], body: body)
    }
}
