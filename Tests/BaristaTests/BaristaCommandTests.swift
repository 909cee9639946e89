import CremaAPNsProtocol
import CremaCore
import Foundation
import NIOHTTP1
import Testing

/// The real `barista` binary against a real `crema serve` on a fresh PostgreSQL database, one per test.
@Suite("barista commands against a real crema serve", .serialized, .timeLimit(.minutes(2)))
struct BaristaCommandTests {
    @Test("queue lists open orders grouped by state, oldest first, as the board has them")
    func queueMatchesTheBoard() async throws {
        try await Crema.with { crema in
            let ana = try await crema.place("Ana")
            let ben = try await crema.place("Ben")
            let chika = try await crema.place("Chika")
            #expect(try await crema.barista("start", "2", "--name", "Sam").status == 0)

            let run = try await crema.barista("queue", "--json")
            #expect(run.status == 0, "\(run)")
            let queue = try run.json()
            let queued = try #require(queue["columns"]?["queued"]?.arrayValue)
            let preparing = try #require(queue["columns"]?["preparing"]?.arrayValue)
            #expect(queued.map { $0["id"]?.stringValue } == [ana, chika])
            #expect(queued.map { $0["number"]?.intValue } == [1, 3])
            #expect(preparing.map { $0["id"]?.stringValue } == [ben])
            #expect(preparing.first?["barista"]?.stringValue == "Sam")
            #expect(queue["columns"]?["ready"]?.arrayValue?.isEmpty == true)
            #expect(queue["store"]?["store_id"]?.stringValue == crema.store)

            let (_, board) = try await crema.api(.GET, "/v1/stores/\(crema.store)/board", key: TestKeys.barista)
            #expect(board["columns"]?["queued"]?.arrayValue?.map { $0["version"]?.intValue } == queued.map { $0["version"]?.intValue })

            // Piped (not a terminal): an aligned plain table, no ANSI escapes.
            let table = try await crema.barista("queue")
            #expect(table.status == 0)
            #expect(!table.stdout.contains("\u{1B}["))
            let lines = table.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains("QUEUED (2)") && lines.contains("PREPARING (1)") && lines.contains("READY (0)"))
            let anaLine = try #require(lines.first { $0.contains("Ana") })
            let chikaLine = try #require(lines.first { $0.contains("Chika") })
            #expect(anaLine.range(of: "1× Oat latte")?.lowerBound.utf16Offset(in: anaLine)
                == chikaLine.range(of: "1× Oat latte")?.lowerBound.utf16Offset(in: chikaLine))
            #expect(lines.firstIndex(of: anaLine)! < lines.firstIndex(of: chikaLine)!)
        }
    }

    @Test("start, ready and handoff move an order through its life, by number with or without #")
    func startReadyHandoff() async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")

            let start = try await crema.barista("start", "1", "--name", "Sam", "--json")
            #expect(start.status == 0, "\(start)")
            #expect(try start.json()["state"]?.stringValue == "preparing")
            #expect(try start.json()["barista"]?.stringValue == "Sam")

            let ready = try await crema.barista("ready", "#1", "--at", "counter", "--json")
            #expect(ready.status == 0, "\(ready)")
            #expect(try ready.json()["pickup_point"]?.stringValue == "counter")
            #expect(try ready.json()["version"]?.intValue == 3)

            // Running the same command again is refused by the state, never applied twice.
            let again = try await crema.barista("ready", "1", "--at", "counter")
            #expect(again.status == 76, "\(again)")

            let handoff = try await crema.barista("handoff", id)
            #expect(handoff.status == 0, "\(handoff)")
            #expect(handoff.stdout.contains("ready → picked up"))

            let order = try await crema.order(id)
            #expect(order["state"]?.stringValue == "picked_up")
            let events = try #require(order["events"]?.arrayValue)
            #expect(events.map { $0["type"]?.stringValue } == ["placed", "started", "ready", "picked_up"])
            #expect(events.dropFirst().allSatisfy { $0["role"]?.stringValue == "barista" })

            // A picked-up order is off the board but still found by its number.
            let show = try await crema.barista("show", "1", "--json")
            #expect(show.status == 0, "\(show)")
            #expect(try show.json()["order"]?["state"]?.stringValue == "picked_up")
        }
    }

    @Test("delay sets the ETA N minutes from now, with its reason")
    func delay() async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")
            let before = Date()
            let run = try await crema.barista("delay", "1", "--minutes", "10", "--reason", "milk delivery", "--json")
            let after = Date()
            #expect(run.status == 0, "\(run)")
            let order = try await crema.order(id)
            let eta = try #require(order["eta"]?.stringValue.flatMap { try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) })
            #expect(eta >= before.addingTimeInterval(600 - 1) && eta <= after.addingTimeInterval(600 + 1))
            #expect(order["delay_reason"]?.stringValue == "milk delivery")
            #expect(order["state"]?.stringValue == "queued")
            #expect(try run.json()["version"]?.intValue == order["version"]?.intValue)
        }
    }

    @Test("cancel by full id records the reason")
    func cancel() async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")
            let run = try await crema.barista("cancel", id.uppercased(), "--reason", "customer left", "--json")
            #expect(run.status == 0, "\(run)")
            let order = try await crema.order(id)
            #expect(order["state"]?.stringValue == "canceled")
            #expect(order["cancel_reason"]?.stringValue == "customer left")
            #expect(try run.json()["allowed_events"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("show prints the state, the history and what the customer's surfaces show now")
    func show() async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")
            _ = try await crema.barista("start", "1", "--name", "Sam")
            _ = try await crema.barista("ready", "1", "--at", "window")

            let run = try await crema.barista("show", "1", "--json")
            #expect(run.status == 0, "\(run)")
            let shown = try run.json()
            #expect(shown["order"]?["id"]?.stringValue == id)
            #expect(shown["order"]?["events"]?.arrayValue?.count == 3)
            let (_, preview) = try await crema.api(.GET, "/v1/orders/\(id)/preview", key: TestKeys.barista)
            #expect(shown["surfaces"]?["families"]?["lockScreen"]?["title"] == preview["families"]?["lockScreen"]?["title"])
            #expect(shown["surfaces"]?["families"]?["small"] == preview["families"]?["small"])
            // The delivery log: the customer registered no token, so each change was a recorded skip.
            let (deliveriesStatus, deliveries) = try await crema.api(.GET, "/v1/orders/\(id)/deliveries", key: TestKeys.barista)
            #expect(deliveriesStatus == 200)
            #expect(shown["deliveries"] == deliveries)

            let text = try await crema.barista("show", "#1")
            #expect(text.status == 0)
            #expect(text.stdout.contains("#1 Ana · ready · version 3"))
            #expect(text.stdout.contains("History") && text.stdout.contains("started  barista  barista=Sam"))
            #expect(text.stdout.contains("What the customer sees now"))
            let title = try #require(preview["families"]?["lockScreen"]?["title"]?.stringValue)
            #expect(text.stdout.contains(title))
            #expect(text.stdout.contains("Deliveries"))
            #expect(text.stdout.contains("ready      order"))
            #expect(text.stdout.contains("no_targets"))
        }
    }

    @Test("on a terminal the queue is colored, unless NO_COLOR is set")
    func colorOnlyOnATerminal() async throws {
        try await Crema.with { crema in
            try await crema.place("Ana")
            // util-linux `script` (Debian: bsdutils, essential) gives the command a pseudo-terminal as stdout.
            let script = URL(fileURLWithPath: "/usr/bin/script")
            let command = "\(Binaries.barista.path) queue"
            let colored = try await Crema.run(script, ["-qec", command, "/dev/null"], environment: crema.environment)
            #expect(colored.status == 0, "\(colored)")
            #expect(colored.stdout.contains("\u{1B}[33mQUEUED (1)\u{1B}[0m"))

            let plain = try await Crema.run(
                script, ["-qec", command, "/dev/null"], environment: crema.environment.merging(["NO_COLOR": "1"]) { $1 })
            #expect(plain.status == 0, "\(plain)")
            #expect(plain.stdout.contains("QUEUED (1)"))
            #expect(!plain.stdout.contains("\u{1B}["))
        }
    }
}
