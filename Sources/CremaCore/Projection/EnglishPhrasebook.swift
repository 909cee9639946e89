import CremaActivityModels

/// English as a café app would say it: short, warm, US clock.
struct EnglishPhrasebook: Phrasebook {
    func clock(_ eta: ETAReading) -> String {
        let hour12 = eta.hour % 12 == 0 ? 12 : eta.hour % 12
        return "\(hour12):\(eta.minute < 10 ? "0" : "")\(eta.minute) \(eta.hour < 12 ? "AM" : "PM")"
    }

    func compactETA(_ eta: ETAReading) -> String {
        if eta.isDue { return "Soon" }
        return eta.minutesLeft < 100 ? "\(eta.minutesLeft) min" : "\(eta.roundedHours) hr"
    }

    func minimalETA(_ eta: ETAReading) -> String? {
        eta.isDue || eta.minutesLeft >= 100 ? nil : "\(eta.minutesLeft)m"
    }

    func relativeETA(_ eta: ETAReading) -> String {
        if eta.isDue { return "any moment now" }
        let (hours, minutes) = eta.minutesLeft.quotientAndRemainder(dividingBy: 60)
        if hours == 0 { return "in \(minutes) min" }
        return minutes == 0 ? "in \(hours) hr" : "in \(hours) hr \(minutes) min"
    }

    func compactWord(_ status: OrderActivityStatus) -> String {
        switch status {
        case .queued, .preparing, .ready: "Ready"
        case .pickedUp: "✓"
        case .canceled: "✕"
        }
    }

    private func readyAround(_ eta: ETAReading) -> String {
        eta.isDue ? "Ready any moment now" : "Ready around \(clock(eta))"
    }

    private func readySentence(_ eta: ETAReading) -> String {
        eta.isDue ? "It'll be ready any moment now." : "It should be ready around \(clock(eta))."
    }

    func smallTitle(_ c: PhraseContext) -> [Phrase] {
        [Phrase("#\(c.number) · ", c.store), Phrase("Order #\(c.number)")]
    }

    func smallStatus(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued: [Phrase(c.eta.isDue ? "In line · any moment" : "In line · \(compactETA(c.eta))")]
        case .preparing: [Phrase(c.eta.isDue ? "Almost ready" : "Preparing · \(compactETA(c.eta))")]
        case .ready: (c.pickup.map { [Phrase("Ready · ", $0)] } ?? []) + [Phrase("Ready for pickup")]
        case .pickedUp: [Phrase("Picked up · enjoy!")]
        case .canceled: [Phrase("Order canceled")]
        }
    }

    func lockTitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued: [Phrase("We've got your order")]
        case .preparing:
            (c.barista.map { [Phrase("", $0, " is making your order")] } ?? []) + [Phrase("Your order is being made")]
        case .ready: [Phrase("", c.customer, ", your order is ready!"), Phrase("Your order is ready!")]
        case .pickedUp: [Phrase("Enjoy, ", c.customer, "!"), Phrase("Enjoy!")]
        case .canceled: [Phrase("Your order was canceled")]
        }
    }

    func lockSubtitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued, .preparing:
            [Phrase("\(readyAround(c.eta)) · ", c.store), Phrase(readyAround(c.eta))]
        case .ready:
            if let pickup = c.pickup {
                [Phrase("Pickup: \(pickup) · ", c.store), Phrase("Pickup: ", pickup)]
            } else {
                [Phrase("Pick it up at ", c.store), Phrase("Pick it up at the counter")]
            }
        case .pickedUp:
            [Phrase("Picked up. Thanks for visiting ", c.store, "!"), Phrase("Picked up. Thanks for visiting!")]
        case .canceled:
            [Phrase("Order #\(c.number) at ", c.store, ". Questions? Just ask us."), Phrase("Questions? Just ask us at the counter.")]
        }
    }

    func detail(_ c: PhraseContext, summary: String) -> [Phrase] {
        [Phrase("#\(c.number) · ", summary)]
    }

    func itemsSummary(_ c: PhraseContext) -> [Phrase] {
        let quantity = c.firstQuantity > 1 ? "\(c.firstQuantity)× " : ""
        let more = c.moreCount > 0 ? " + \(c.moreCount) more" : ""
        let withSize = c.firstSize.map { [Phrase(quantity, c.firstItem, " (\($0))\(more)")] } ?? []
        return withSize + [Phrase(quantity, c.firstItem, more)]
    }

    func alertTitle(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase] {
        switch event {
        case .placed: [Phrase("Order received")]
        case .started: [Phrase("Your order is being made")]
        case .delayed: [Phrase("Running a little late")]
        case .ready: [Phrase("", c.customer, ", your order is ready!"), Phrase("Your order is ready!")]
        case .pickedUp: [Phrase("Enjoy!")]
        case .canceled: [Phrase("Order canceled")]
        case .expired: [Phrase("Order closed")]
        }
    }

    func alertBody(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase] {
        let n = c.number
        switch event {
        case .placed:
            return [Phrase("", c.store, " has your order #\(n). \(readySentence(c.eta))"),
                    Phrase("We have your order #\(n). \(readySentence(c.eta))")]
        case .started:
            let tail = c.eta.isDue ? "Ready any moment now." : "Ready around \(clock(c.eta))."
            return (c.barista.map { [Phrase("", $0, " is making order #\(n). \(tail)")] } ?? [])
                + [Phrase("Order #\(n) is being made. \(tail)")]
        case .delayed:
            let when = c.eta.isDue ? "will be ready any moment now" : "should be ready around \(clock(c.eta))"
            return [Phrase("Sorry for the wait! Order #\(n) \(when).")]
        case .ready:
            if let pickup = c.pickup { return [Phrase("Grab order #\(n) at: ", pickup, ".")] }
            return [Phrase("Order #\(n) is waiting for you at ", c.store, "."), Phrase("Order #\(n) is waiting for you.")]
        case .pickedUp:
            return [Phrase("Thanks for visiting ", c.store, ". See you next time!"), Phrase("Thanks, see you next time!")]
        case .canceled:
            return [Phrase("Order #\(n) at ", c.store, " was canceled. Questions? Just ask us."),
                    Phrase("Order #\(n) was canceled. Questions? Just ask us.")]
        case .expired:
            return [Phrase("Order #\(n) at ", c.store, " waited too long and was closed. Questions? Just ask us."),
                    Phrase("Order #\(n) waited too long and was closed. Questions? Just ask us.")]
        }
    }
}
