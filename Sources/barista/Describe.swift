import CremaAPI
import CremaAPNsProtocol
import CremaCore
import Foundation

/// The words and short forms `barista` uses for orders, times and actions.
enum Describe {
    /// The barista command for each event, so "allowed now" reads as things to type.
    static func command(for event: OrderEventType) -> String {
        switch event {
        case .placed: "place (POS only)"
        case .started: "start"
        case .delayed: "delay"
        case .ready: "ready"
        case .pickedUp: "handoff"
        case .canceled: "cancel"
        case .expired: "expire (Crema only)"
        }
    }

    static func command(forEvent name: String) -> String {
        OrderEventType(rawValue: name).map { command(for: $0) } ?? name
    }

    /// "start, delay, ready, cancel", or a sentence when nothing is allowed any more.
    static func allowedActions(_ order: OrderResponse) -> String {
        let actions = order.allowedEvents.map(command(for:))
        return actions.isEmpty ? "nothing (the order is \(state(order.state)))" : actions.joined(separator: ", ")
    }

    static func state(_ state: OrderState) -> String {
        state == .pickedUp ? "picked up" : state.rawValue
    }

    /// "1× Oat latte (grande, extra shot), 2× Flat white"
    static func items(_ items: [ItemResponse]) -> String {
        items.map { item in
            var text = "\(item.quantity)× \(item.name)"
            let extras = ([item.size].compactMap { $0 } + item.modifiers).filter { !$0.isEmpty }
            if !extras.isEmpty { text += " (\(extras.joined(separator: ", ")))" }
            return text
        }.joined(separator: ", ")
    }

    /// "45s", "7m", "1h05m"
    static func duration(_ seconds: TimeInterval) -> String {
        let total = max(0, Int(seconds.rounded()))
        if total < 60 { return "\(total)s" }
        // To the nearest minute, as the customer's "in 6 min" reads it.
        let wholeMinutes = (total + 30) / 60
        if wholeMinutes < 60 { return "\(wholeMinutes)m" }
        let minutes = wholeMinutes % 60
        return "\(wholeMinutes / 60)h" + (minutes < 10 ? "0" : "") + "\(minutes)m"
    }

    /// "in 4m", "now", "3m late"
    static func eta(_ eta: Date?, now: Date) -> (text: String, late: Bool) {
        guard let eta else { return ("—", false) }
        let delta = eta.timeIntervalSince(now)
        if abs(delta) < 30 { return ("now", false) }
        return delta > 0 ? ("in \(duration(delta))", false) : ("\(duration(-delta)) late", true)
    }

    /// Wall-clock time on this machine: "10:04:12".
    static func clock(_ date: Date, seconds: Bool = true) -> String {
        let parts = Calendar.current.dateComponents([.hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return two(parts.hour) + ":" + two(parts.minute) + (seconds ? ":" + two(parts.second) : "")
    }

    /// An event's data as "barista=Sam, pickup_point=counter" (the placed event's items are summarised).
    static func eventDetail(_ event: EventResponse) -> String {
        guard case .object(let data) = event.data else { return "" }
        return data.keys.sorted().compactMap { key in
            guard let value = data[key], value != .null else { return nil }
            if key == "items", let array = value.arrayValue { return "\(array.count) item\(array.count == 1 ? "" : "s")" }
            if key == "eta", let text = value.stringValue, let date = WireCoding.parseRFC3339(text) { return "eta=\(clock(date, seconds: false))" }
            return "\(key)=\(value.brief)"
        }.joined(separator: ", ")
    }

    /// "ready by barista at 10:02:03", with the barista's name when the event carries one.
    static func event(_ event: EventResponse) -> String {
        var who = event.role
        if let name = event.data["barista"]?.stringValue { who += " \(name)" }
        return "\(event.type) by \(who) at \(clock(event.at))"
    }
}
