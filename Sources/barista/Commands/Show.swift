import CremaAPI
import CremaAPNsProtocol
import CremaActivityModels
import ArgumentParser
import CremaCore
import Foundation

extension Barista {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one order: its state, history, what the customer sees now, and its delivery log.",
            discussion: "The delivery log (GET /v1/orders/{id}/deliveries) lists each push decision: the event, the token kind, the push, its outcome and the reason code (docs/delivery.md). A server without that route leaves the section out.")

        @Argument(help: "The order: the number on the cup (42 or #42) or its full id.") var order: OrderReference
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let (reference, json) = (order, options.json)
            try await Runner.run(options) { settings, client, terminal in
                let order = try await reference.resolve(with: client, settings: settings)
                let preview = try await client.preview(id: order.idText)
                let deliveries = try await client.deliveries(id: order.idText)
                if json {
                    try terminal.json(ShowOutput(order: order, surfaces: preview, deliveries: deliveries))
                } else {
                    Self.render(order, preview: preview, deliveries: deliveries, now: Date(), terminal: terminal).forEach { terminal.line($0) }
                }
            }
        }

        static func render(_ order: OrderResponse, preview: OrderPreview, deliveries: DeliveriesResponse?, now: Date, terminal: Terminal) -> [String] {
            var lines: [String] = []
            let stateColor: Terminal.Style = switch order.state {
            case .queued: .yellow
            case .preparing: .blue
            case .ready, .pickedUp: .green
            case .canceled: .red
            }
            lines.append(
                terminal.paint("#\(order.number) \(order.displayName)", .bold) + " · " + terminal.paint(Describe.state(order.state), stateColor)
                    + " · version \(order.version) · store \(order.storeID)")
            // Once the order is over, "in 6m" or "3m late" would mislead: the promised time alone.
            let eta = Describe.clock(order.eta, seconds: false) + (order.state.isTerminal ? "" : " (\(Describe.eta(order.eta, now: now).text))")
            var facts = [
                ("placed", "\(Describe.clock(order.placedAt)) (\(Describe.duration(now.timeIntervalSince(order.placedAt))) ago)"),
                ("eta", eta), ("items", Describe.items(order.items)),
            ]
            if let barista = order.barista { facts.append(("barista", barista)) }
            if let point = order.pickupPoint { facts.append(("pickup", point)) }
            if let reason = order.delayReason { facts.append(("delayed", reason)) }
            if let reason = order.cancelReason { facts.append(("canceled", reason)) }
            facts.append(("allowed now", Describe.allowedActions(order)))
            lines += facts.map { "  " + $0.0.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.1 }

            lines.append("")
            lines.append(terminal.paint("History", .bold))
            var history = Table(header: ["V", "AT", "EVENT", "BY", "DETAIL"], maxWidth: [4: 70])
            for event in order.events ?? [] {
                history.rows.append(["\(event.version)", Describe.clock(event.at), event.type, event.role, Describe.eventDetail(event)])
            }
            lines += history.render(terminal: terminal, indent: "  ")

            lines.append("")
            lines.append(terminal.paint("What the customer sees now", .bold) + " (\(preview.locale), as of \(Describe.clock(preview.generatedAt)))")
            let families = preview.families
            var surfaces = Table(header: ["SURFACE", "SHOWS"])
            surfaces.rows.append(["Dynamic Island", families.compactLeading.text + " · " + families.compactTrailing.text])
            surfaces.rows.append(["  minimal", families.minimal.text ?? "(symbol only)"])
            surfaces.rows.append(["Watch, CarPlay", families.small.title + " · " + families.small.status])
            let lock = families.lockScreen
            let lockETA = [lock.etaRelative, lock.etaAbsolute].compactMap { $0 }.joined(separator: ", ")
            surfaces.rows.append(["Lock Screen", lock.title + " · " + lock.subtitle])
            if let detail = lock.detail { surfaces.rows.append(["", detail]) }
            if !lockETA.isEmpty { surfaces.rows.append(["", lockETA]) }
            lines += surfaces.render(terminal: terminal, indent: "  ")

            if let deliveries {
                lines.append("")
                lines.append(terminal.paint("Deliveries", .bold))
                if deliveries.deliveries.isEmpty { lines.append("  none yet") }
                // One line per decision: the event it answered, what went where, and why (docs/delivery.md).
                for row in deliveries.deliveries {
                    let event = row.orderEvent ?? "-"
                    let target = row.targetKind ?? "order"
                    var what = row.liveActivityEvent.map { "liveactivity \($0)" } ?? row.pushType ?? "-"
                    if let priority = row.priority { what += " p\(priority)" }
                    let state = row.state
                    var outcome = state
                    if let status = row.apnsStatus { outcome += " \(status)" }
                    if let reason = row.apnsReason, state != "sent" { outcome += " (\(reason))" }
                    let code = row.reasonCode
                    lines.append("  \(event.padding(toLength: 10, withPad: " ", startingAt: 0)) \(target.padding(toLength: 14, withPad: " ", startingAt: 0)) \(what.padding(toLength: 24, withPad: " ", startingAt: 0)) \(outcome.padding(toLength: 12, withPad: " ", startingAt: 0)) \(code)")
                }
            }
            return lines
        }
    }
}

/// `show --json`: `{"order":{…with events},"surfaces":{…preview},"deliveries":[…]}`; `deliveries` is
/// absent while the server has no delivery log.
struct ShowOutput: Encodable {
    var order: OrderResponse
    var surfaces: OrderPreview
    var deliveries: DeliveriesResponse?
}
