import CremaActivityModels

/// Spanish for Spain and Latin America alike: tú, 24-hour clock, "hacia las 10:05".
struct SpanishPhrasebook: Phrasebook {
    func clock(_ eta: ETAReading) -> String { eta.twentyFourHour }

    /// "la 1:05" but "las 10:05" (and "las 0:30").
    private func atClock(_ eta: ETAReading) -> String {
        "\(eta.hour == 1 ? "la" : "las") \(clock(eta))"
    }

    func compactETA(_ eta: ETAReading) -> String {
        if eta.isDue { return "Pronto" }
        return eta.minutesLeft < 100 ? "\(eta.minutesLeft) min" : "\(eta.roundedHours) h"
    }

    func minimalETA(_ eta: ETAReading) -> String? {
        eta.isDue || eta.minutesLeft >= 100 ? nil : "\(eta.minutesLeft)m"
    }

    func relativeETA(_ eta: ETAReading) -> String {
        if eta.isDue { return "en cualquier momento" }
        let (hours, minutes) = eta.minutesLeft.quotientAndRemainder(dividingBy: 60)
        if hours == 0 { return "en \(minutes) min" }
        return minutes == 0 ? "en \(hours) h" : "en \(hours) h \(minutes) min"
    }

    func compactWord(_ status: OrderActivityStatus) -> String {
        switch status {
        case .queued, .preparing, .ready: "Listo"
        case .pickedUp: "✓"
        case .canceled: "✕"
        }
    }

    private func readyAround(_ eta: ETAReading) -> String {
        eta.isDue ? "Listo en cualquier momento" : "Listo hacia \(atClock(eta))"
    }

    private func readySentence(_ eta: ETAReading) -> String {
        eta.isDue ? "Estará listo en cualquier momento." : "Estará listo hacia \(atClock(eta))."
    }

    func smallTitle(_ c: PhraseContext) -> [Phrase] {
        [Phrase("#\(c.number) · ", c.store), Phrase("Pedido #\(c.number)")]
    }

    func smallStatus(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued: [Phrase(c.eta.isDue ? "En espera · ya casi" : "En espera · \(compactETA(c.eta))")]
        case .preparing: [Phrase(c.eta.isDue ? "Ya casi está" : "Preparando · \(compactETA(c.eta))")]
        case .ready: (c.pickup.map { [Phrase("Listo · ", $0)] } ?? []) + [Phrase("Listo para recoger")]
        case .pickedUp: [Phrase("¡Que lo disfrutes!")]
        case .canceled: [Phrase("Pedido cancelado")]
        }
    }

    func lockTitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued: [Phrase("Recibimos tu pedido")]
        case .preparing:
            (c.barista.map { [Phrase("", $0, " está preparando tu pedido")] } ?? []) + [Phrase("Estamos preparando tu pedido")]
        case .ready: [Phrase("", c.customer, ", ¡tu pedido está listo!"), Phrase("¡Tu pedido está listo!")]
        case .pickedUp: [Phrase("¡Que lo disfrutes, ", c.customer, "!"), Phrase("¡Que lo disfrutes!")]
        case .canceled: [Phrase("Se canceló tu pedido")]
        }
    }

    func lockSubtitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued, .preparing:
            [Phrase("\(readyAround(c.eta)) · ", c.store), Phrase(readyAround(c.eta))]
        case .ready:
            if let pickup = c.pickup {
                [Phrase("Recógelo en: \(pickup) · ", c.store), Phrase("Recógelo en: ", pickup)]
            } else {
                [Phrase("Recógelo en ", c.store), Phrase("Ya puedes recogerlo")]
            }
        case .pickedUp:
            [Phrase("Recogido. ¡Gracias por visitar ", c.store, "!"), Phrase("Recogido. ¡Gracias por tu visita!")]
        case .canceled:
            [Phrase("Pedido #\(c.number) en ", c.store, ". ¿Dudas? Pregúntanos."), Phrase("¿Tienes dudas? Pregúntanos en el mostrador.")]
        }
    }

    func detail(_ c: PhraseContext, summary: String) -> [Phrase] {
        [Phrase("#\(c.number) · ", summary)]
    }

    func itemsSummary(_ c: PhraseContext) -> [Phrase] {
        let quantity = c.firstQuantity > 1 ? "\(c.firstQuantity)× " : ""
        let more = c.moreCount > 0 ? " y \(c.moreCount) más" : ""
        let withSize = c.firstSize.map { [Phrase(quantity, c.firstItem, " (\($0))\(more)")] } ?? []
        return withSize + [Phrase(quantity, c.firstItem, more)]
    }

    func alertTitle(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase] {
        switch event {
        case .placed: [Phrase("Pedido recibido")]
        case .started: [Phrase("Estamos preparando tu pedido")]
        case .delayed: [Phrase("Tu pedido se retrasa un poco")]
        case .ready: [Phrase("", c.customer, ", ¡tu pedido está listo!"), Phrase("¡Tu pedido está listo!")]
        case .pickedUp: [Phrase("¡Que lo disfrutes!")]
        case .canceled: [Phrase("Pedido cancelado")]
        case .expired: [Phrase("Pedido cerrado")]
        }
    }

    func alertBody(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase] {
        let n = c.number
        switch event {
        case .placed:
            return [Phrase("", c.store, " recibió tu pedido #\(n). \(readySentence(c.eta))"),
                    Phrase("Recibimos tu pedido #\(n). \(readySentence(c.eta))")]
        case .started:
            return (c.barista.map { [Phrase("", $0, " está preparando tu pedido #\(n). \(readySentence(c.eta))")] } ?? [])
                + [Phrase("Estamos preparando tu pedido #\(n). \(readySentence(c.eta))")]
        case .delayed:
            let when = c.eta.isDue ? "estará listo en cualquier momento" : "estará listo hacia \(atClock(c.eta))"
            return [Phrase("¡Perdona la espera! Tu pedido #\(n) \(when).")]
        case .ready:
            if let pickup = c.pickup { return [Phrase("Recoge tu pedido #\(n) en: ", pickup, ".")] }
            return [Phrase("Tu pedido #\(n) te espera en ", c.store, "."), Phrase("Tu pedido #\(n) te espera.")]
        case .pickedUp:
            return [Phrase("Gracias por visitar ", c.store, ". ¡Hasta pronto!"), Phrase("¡Gracias y hasta pronto!")]
        case .canceled:
            return [Phrase("Se canceló tu pedido #\(n) en ", c.store, ". ¿Dudas? Pregúntanos."),
                    Phrase("Se canceló tu pedido #\(n). ¿Dudas? Pregúntanos.")]
        case .expired:
            return [Phrase("Tu pedido #\(n) en ", c.store, " esperó demasiado y se cerró. ¿Dudas? Pregúntanos."),
                    Phrase("Tu pedido #\(n) esperó demasiado y se cerró. ¿Dudas? Pregúntanos.")]
        }
    }
}
