import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

/// The wire contract, byte for byte: every change to a body shows up in review as a changed file under
/// Golden/. Run with `CREMA_UPDATE_GOLDEN=1` to rewrite the files after an intended change.
@Suite struct GoldenBodyTests {
    typealias F = ActivityFixtures

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var state: OrderState
        var event: LiveActivityEvent?  // nil: the alert notification body
        var alertFor: OrderEventType?
        var eta: TimeInterval = 300
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "queued-start", state: .queued, event: .start, alertFor: .placed),
        Case(name: "preparing-update", state: .preparing, event: .update, alertFor: nil),
        Case(name: "preparing-late-update", state: .preparing, event: .update, alertFor: .delayed, eta: -90),
        Case(name: "ready-update", state: .ready, event: .update, alertFor: .ready),
        Case(name: "ready-alert", state: .ready, event: nil, alertFor: .ready),
        Case(name: "picked_up-end", state: .pickedUp, event: .end, alertFor: nil),
        Case(name: "canceled-end", state: .canceled, event: .end, alertFor: .canceled),
        Case(name: "canceled-alert", state: .canceled, event: nil, alertFor: .canceled),
        // An order Crema closed (`expired`): the quiet end the planner sends, and the alert wording the preview shows.
        Case(name: "expired-end", state: .canceled, event: .end, alertFor: nil),
        Case(name: "expired-alert", state: .canceled, event: nil, alertFor: .expired),
    ]

    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    @Test("the body matches its golden file byte for byte", arguments: cases, ["en", "es", "ja"])
    func theBodyMatchesItsGoldenFileByteForByte(_ c: Case, _ locale: String) throws {
        let order = F.order(c.state, locale: locale, eta: c.eta)
        let body: APNsBody
        if let event = c.event {
            body = APNsBodyBuilder.liveActivity(
                order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: locale,
                event: event, alertFor: c.alertFor)
        } else {
            body = APNsBodyBuilder.alert(
                for: c.alertFor!, order: order, storeName: F.storeName, timeZone: F.losAngeles, now: F.now, locale: locale)
        }
        #expect(body.droppedFields.isEmpty && body.textByteCap == nil)
        let file = Self.golden.appendingPathComponent("\(c.name).\(locale).json")
        if ProcessInfo.processInfo.environment["CREMA_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: Self.golden, withIntermediateDirectories: true)
            try body.json.write(to: file)
            return
        }
        let expected = try Data(contentsOf: file)
        #expect(body.json == expected, "\(file.lastPathComponent) differs:\n\(body.string)\nexpected:\n\(String(decoding: expected, as: UTF8.self))")
    }

    @Test("the widget body matches its golden file") func theWidgetBodyMatchesItsGoldenFile() throws {
        let file = Self.golden.appendingPathComponent("widgets.json")
        if ProcessInfo.processInfo.environment["CREMA_UPDATE_GOLDEN"] == "1" {
            try APNsBodyBuilder.widget.json.write(to: file)
            return
        }
        #expect(APNsBodyBuilder.widget.json == (try Data(contentsOf: file)))
    }
}
