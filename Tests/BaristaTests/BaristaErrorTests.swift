import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// Every error path ends in one line on stderr that says what to do, and its documented exit code.
@Suite("barista errors and exit codes", .serialized, .timeLimit(.minutes(2)))
struct BaristaErrorTests {
    @Test("an unreachable server exits 69 and says to check the server")
    func unreachable() async throws {
        try await Crema.with { crema in
            let dead = try DeadPort()
            let run = try await crema.barista("queue", "--server", "http://127.0.0.1:\(dead.port)")
            #expect(run.status == 69, "\(run)")
            #expect(run.stderr.contains("Cannot reach Crema at http://127.0.0.1:\(dead.port)"))
            #expect(run.stderr.split(separator: "\n").count == 1)
            let json = try await crema.barista("start", "1", "--json", environment: ["CREMA_SERVER": "127.0.0.1:\(dead.port)"])
            #expect(json.status == 69)
            #expect(try json.json()["error"]?["exit_code"]?.intValue == 69)
        }
    }

    @Test("a wrong key exits 77, a POS key starting an order exits 77, no key exits 78")
    func keys() async throws {
        try await Crema.with { crema in
            try await crema.place("Ana")
            let wrong = try await crema.barista("queue", environment: ["CREMA_BARISTA_KEY": "not-the-key-at-all-123"])
            #expect(wrong.status == 77, "\(wrong)")
            #expect(wrong.stderr.contains("refused the key: set CREMA_BARISTA_KEY"))

            let pos = try await crema.barista("start", "1", environment: ["CREMA_BARISTA_KEY": TestKeys.pos])
            #expect(pos.status == 77, "\(pos)")
            #expect(pos.stderr.contains("a pos key"))

            let none = try await crema.barista("queue", environment: ["CREMA_BARISTA_KEY": nil])
            #expect(none.status == 78, "\(none)")
            #expect(none.stderr.contains("No barista key"))
        }
    }

    @Test("unknown orders and stores exit 66")
    func unknown() async throws {
        try await Crema.with { crema in
            try await crema.place("Ana")
            let number = try await crema.barista("show", "#42")
            #expect(number.status == 66, "\(number)")
            #expect(number.stderr.contains("There is no order #42 in store 'market-st'"))

            let id = try await crema.barista("ready", UUID().uuidString)
            #expect(id.status == 66, "\(id)")

            let store = try await crema.barista("queue", "--store", "no-such-store", "--json")
            #expect(store.status == 66, "\(store)")
            #expect(try store.json()["error"]?["code"]?.stringValue == "unknown_store")
        }
    }

    @Test("an action the state does not allow exits 76 and names the allowed actions")
    func notAllowed() async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")
            let run = try await crema.barista("handoff", "1")
            #expect(run.status == 76, "\(run)")
            #expect(run.stderr.contains("Cannot handoff #1 Ana: it is queued"))
            #expect(run.stderr.contains("allowed now: start, delay, ready, cancel"))

            let json = try await crema.barista("handoff", "1", "--json")
            #expect(try json.json()["error"]?["code"]?.stringValue == "invalid_transition")
            #expect(try json.json()["error"]?["order"]?["state"]?.stringValue == "queued")
            #expect(try await crema.order(id)["version"]?.intValue == 1)
        }
    }

    @Test("usage errors exit 64, a refused value exits 65")
    func usage() async throws {
        try await Crema.with { crema in
            try await crema.place("Ana")
            #expect(try await crema.barista("start", "abc").status == 64)
            #expect(try await crema.barista("cancel", "1").status == 64)
            #expect(try await crema.barista("delay", "1", "--minutes", "0").status == 64)
            #expect(try await crema.barista("frobnicate").status == 64)
            let noStore = try await crema.barista("start", "1", environment: ["CREMA_STORE": nil])
            #expect(noStore.status == 64, "\(noStore)")
            #expect(noStore.stderr.contains("needs a store"))

            let blank = try await crema.barista("cancel", "1", "--reason", "  ")
            #expect(blank.status == 65, "\(blank)")
            #expect(blank.stderr.contains("reason"))
        }
    }

    @Test("a change that lost a race exits 75 and says what changed and what is allowed now")
    func versionConflict() async throws {
        try await Crema.with { crema in
            let id = try await crema.place("Ana")
            _ = try await crema.barista("start", "1", "--name", "Sam")
            let run = try await crema.barista("delay", "1", "--minutes", "5", "--expected-version", "1")
            #expect(run.status == 75, "\(run)")
            #expect(run.stderr.contains("changed since you looked (version 1): it is now preparing at version 2 after started by barista Sam"))
            #expect(run.stderr.contains("allowed now: delay, ready, cancel"))
            #expect(try await crema.order(id)["version"]?.intValue == 2)
        }
    }
}
