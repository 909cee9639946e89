import CremaActivityModels

/// Japanese in a shop's polite voice (丁寧語 with 様 for the customer); 24-hour clock, "10:05ごろ".
struct JapanesePhrasebook: Phrasebook {
    func clock(_ eta: ETAReading) -> String { eta.twentyFourHour }

    func compactETA(_ eta: ETAReading) -> String {
        if eta.isDue { return "すぐ" }
        if eta.minutesLeft < 100 { return "\(eta.minutesLeft)分" }
        return eta.roundedHours < 10 ? "\(eta.roundedHours)時間" : "\(eta.roundedHours)h"
    }

    /// "5分" up to nine minutes; the bare number from 10 to 99 (three columns hold no more).
    func minimalETA(_ eta: ETAReading) -> String? {
        if eta.isDue || eta.minutesLeft >= 100 { return nil }
        return eta.minutesLeft < 10 ? "\(eta.minutesLeft)分" : "\(eta.minutesLeft)"
    }

    func relativeETA(_ eta: ETAReading) -> String {
        if eta.isDue { return "まもなく" }
        let (hours, minutes) = eta.minutesLeft.quotientAndRemainder(dividingBy: 60)
        if hours == 0 { return "あと\(minutes)分" }
        return minutes == 0 ? "あと\(hours)時間" : "あと\(hours)時間\(minutes)分"
    }

    func compactWord(_ status: OrderActivityStatus) -> String {
        switch status {
        case .queued, .preparing, .ready: "受取可"
        case .pickedUp: "✓"
        case .canceled: "✕"
        }
    }

    private func readyAround(_ eta: ETAReading) -> String {
        eta.isDue ? "まもなく完成します" : "\(clock(eta))ごろ完成予定"
    }

    private func readySentence(_ eta: ETAReading) -> String {
        eta.isDue ? "まもなく完成します。" : "\(clock(eta))ごろ完成予定です。"
    }

    func smallTitle(_ c: PhraseContext) -> [Phrase] {
        [Phrase("\(c.number)番 · ", c.store), Phrase("ご注文 \(c.number)番")]
    }

    func smallStatus(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued: [Phrase(c.eta.isDue ? "受付済み · まもなく" : "受付済み · あと\(compactETA(c.eta))")]
        case .preparing: [Phrase(c.eta.isDue ? "まもなく完成します" : "準備中 · あと\(compactETA(c.eta))")]
        case .ready: (c.pickup.map { [Phrase("", $0, "でお受け取り")] } ?? []) + [Phrase("ご用意できました")]
        case .pickedUp: [Phrase("お受け取り済み")]
        case .canceled: [Phrase("キャンセル済み")]
        }
    }

    func lockTitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued: [Phrase("ご注文を承りました")]
        case .preparing:
            (c.barista.map { [Phrase("バリスタの", $0, "がお作りしています")] } ?? []) + [Phrase("ただいまお作りしています")]
        case .ready: [Phrase("", c.customer, "様、ご注文の品ができあがりました"), Phrase("ご注文の品ができあがりました")]
        case .pickedUp: [Phrase("", c.customer, "様、ありがとうございました"), Phrase("ありがとうございました")]
        case .canceled: [Phrase("ご注文はキャンセルされました")]
        }
    }

    func lockSubtitle(_ status: OrderActivityStatus, _ c: PhraseContext) -> [Phrase] {
        switch status {
        case .queued, .preparing:
            [Phrase("\(readyAround(c.eta)) · ", c.store), Phrase(readyAround(c.eta))]
        case .ready:
            if let pickup = c.pickup {
                [Phrase("\(pickup)でお受け取りください · ", c.store), Phrase("", pickup, "でお受け取りください")]
            } else {
                [Phrase("", c.store, "でお受け取りください"), Phrase("お受け取りください")]
            }
        case .pickedUp:
            [Phrase("", c.store, "をご利用いただきありがとうございました"), Phrase("またのご来店をお待ちしております")]
        case .canceled:
            [Phrase("\(c.number)番 · ご不明な点はスタッフまでお尋ねください")]
        }
    }

    func detail(_ c: PhraseContext, summary: String) -> [Phrase] {
        [Phrase("\(c.number)番 · ", summary)]
    }

    func itemsSummary(_ c: PhraseContext) -> [Phrase] {
        let quantity = c.firstQuantity > 1 ? " ×\(c.firstQuantity)" : ""
        func more(afterParenthesis: Bool) -> String {
            guard c.moreCount > 0 else { return "" }
            return (afterParenthesis ? "" : " ") + "ほか\(c.moreCount)点"
        }
        let withSize = c.firstSize.map {
            [Phrase("", c.firstItem, "（\($0)）\(quantity)\(more(afterParenthesis: quantity.isEmpty))")]
        } ?? []
        return withSize + [Phrase("", c.firstItem, "\(quantity)\(more(afterParenthesis: false))")]
    }

    func alertTitle(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase] {
        switch event {
        case .placed: [Phrase("ご注文を承りました")]
        case .started: [Phrase("ただいまお作りしています")]
        case .delayed: [Phrase("お待たせしております")]
        case .ready: [Phrase("", c.customer, "様、ご注文の品ができあがりました"), Phrase("ご注文の品ができあがりました")]
        case .pickedUp: [Phrase("ありがとうございました")]
        case .canceled: [Phrase("ご注文はキャンセルされました")]
        case .expired: [Phrase("ご注文を締め切りました")]
        }
    }

    func alertBody(_ event: OrderEventType, _ c: PhraseContext) -> [Phrase] {
        let n = c.number
        switch event {
        case .placed:
            return [Phrase("", c.store, "にて\(n)番のご注文を承りました。\(readySentence(c.eta))"),
                    Phrase("\(n)番のご注文を承りました。\(readySentence(c.eta))")]
        case .started:
            return (c.barista.map { [Phrase("バリスタの", $0, "が\(n)番のご注文をお作りしています。\(readySentence(c.eta))")] } ?? [])
                + [Phrase("\(n)番のご注文をお作りしています。\(readySentence(c.eta))")]
        case .delayed:
            let when = c.eta.isDue ? "まもなく完成します" : "\(clock(c.eta))ごろの完成予定です"
            return [Phrase("お待たせして申し訳ありません。\(n)番のご注文は\(when)。")]
        case .ready:
            if let pickup = c.pickup { return [Phrase("\(n)番のご注文を", pickup, "でお受け取りください。")] }
            return [Phrase("\(n)番のご注文を", c.store, "でお受け取りください。"), Phrase("\(n)番のご注文をお受け取りください。")]
        case .pickedUp:
            return [Phrase("", c.store, "をご利用いただきありがとうございました。またのご来店をお待ちしております。"),
                    Phrase("またのご来店をお待ちしております。")]
        case .canceled:
            return [Phrase("", c.store, "の\(n)番のご注文はキャンセルされました。ご不明な点はスタッフまでお尋ねください。"),
                    Phrase("\(n)番のご注文はキャンセルされました。ご不明な点はスタッフまでお尋ねください。")]
        case .expired:
            return [Phrase("", c.store, "の\(n)番のご注文は一定時間が過ぎたため締め切りました。ご不明な点はスタッフまでお尋ねください。"),
                    Phrase("\(n)番のご注文は一定時間が過ぎたため締め切りました。ご不明な点はスタッフまでお尋ねください。")]
        }
    }
}
