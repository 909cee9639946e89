import CremaAPI
import CremaAPNsProtocol
import CremaCore
import Foundation

/// The body of `POST /v1/orders/{id}/events`; fields a type does not carry are left out.
struct EventRequest: Encodable, Sendable {
    var type: String
    var expectedVersion: Int
    var barista: String?
    var eta: Date?
    var reason: String?
    var pickupPoint: String?

    enum CodingKeys: String, CodingKey {
        case type, barista, eta, reason
        case expectedVersion = "expected_version", pickupPoint = "pickup_point"
    }
}

/// What every changing command does: read the order, send the event conditional on the version seen,
/// and explain a refusal in terms of what changed and what is allowed now.
enum Change {
    static func apply(
        _ event: OrderEventType, to reference: OrderReference, options: GlobalOptions, expectedVersion: Int?,
        name: String? = nil, fill: @escaping @Sendable (inout EventRequest, Settings) -> Void = { _, _ in }
    ) async throws {
        try await Runner.run(options, name: name) { settings, client, terminal in
            let order = try await reference.resolve(with: client, settings: settings)
            var request = EventRequest(type: event.rawValue, expectedVersion: expectedVersion ?? order.version)
            fill(&request, settings)
            // One key per invocation: retries inside this run reuse it; a new run is guarded by the version.
            let idempotencyKey = "barista-" + UUID().uuidString.lowercased()
            let updated: OrderResponse
            do {
                updated = try await client.postEvent(orderID: order.idText, body: request, idempotencyKey: idempotencyKey)
            } catch let failure as APIFailure where failure.httpStatus == 409 {
                throw await explain(failure, event: event, seen: order, expected: request.expectedVersion, client: client)
            } catch let failure as APIFailure where failure.code == "unknown_order" {
                throw BaristaError(.notFound, "Order \(label(order)) is gone from \(client.server): check it with barista queue.",
                    code: failure.code)
            }
            if options.json {
                try terminal.json(updated)
            } else {
                terminal.line(summary(event, before: order, after: updated, terminal: terminal))
            }
        }
    }

    static func label(_ order: OrderResponse) -> String { "#\(order.number) \(order.displayName)" }

    /// "#42 Ana: queued → preparing (version 2, Sam). Next: delay, ready, cancel."
    static func summary(_ event: OrderEventType, before: OrderResponse, after: OrderResponse, terminal: Terminal) -> String {
        var text = terminal.paint("#\(after.number)", .bold) + " \(after.displayName): "
        text += before.state == after.state
            ? Describe.state(after.state) : "\(Describe.state(before.state)) → " + terminal.paint(Describe.state(after.state), .green)
        var notes = ["version \(after.version)"]
        switch event {
        case .started: if let barista = after.barista { notes.append("made by \(barista)") }
        case .ready: if let point = after.pickupPoint { notes.append("at \(point)") }
        case .delayed:
            notes.append("new ETA \(Describe.clock(after.eta, seconds: false)) (\(Describe.eta(after.eta, now: Date()).text))")
        case .canceled: if let reason = after.cancelReason { notes.append("reason: \(reason)") }
        case .placed, .pickedUp, .expired: break
        }
        text += " (\(notes.joined(separator: ", ")))."
        if !after.allowedEvents.isEmpty { text += " Next: \(Describe.allowedActions(after))." }
        return text
    }

    /// A 409 in the barista's terms: what changed since they looked (and who), and what they can do now.
    static func explain(_ failure: APIFailure, event: OrderEventType, seen: OrderResponse, expected: Int, client: CremaClient) async
        -> BaristaError
    {
        let current = try? await client.order(id: seen.idText)
        let now = current ?? seen
        let allowed = "allowed now: \(Describe.allowedActions(now))"
        let command = Describe.command(for: event)
        switch failure.code {
        case "version_conflict":
            let actual = failure.details["actual"]?.intValue ?? now.version
            let changes = (current?.events ?? []).filter { $0.version > expected }.map(Describe.event)
            let what = changes.isEmpty ? "" : " after \(changes.joined(separator: "; "))"
            return BaristaError(
                .conflict,
                "\(label(now)) changed since you looked (version \(expected)): it is now \(Describe.state(now.state)) at version \(actual)\(what). "
                    + "Your \(command) was not applied; \(allowed).",
                code: failure.code, current: current)
        case "invalid_transition":
            let last = current?.events?.last.map { " (\(Describe.event($0)))" } ?? ""
            return BaristaError(
                .notAllowed,
                "Cannot \(command) \(label(now)): it is \(Describe.state(now.state))\(last). Nothing was applied; \(allowed).",
                code: failure.code, current: current)
        default:
            return BaristaError(.conflict, "\(label(now)): \(failure.message) Nothing was applied; \(allowed).", code: failure.code,
                current: current)
        }
    }
}
