@testable import CremaDelivery
import Testing

/// The dispatcher worker's window: claims stay batched under load, an idle worker claims at once, and a full
/// window waits for sends to come back.
struct SendWindowTests {
    @Test("an idle worker claims a whole window")
    func idleWorkerClaimsAWholeWindow() {
        #expect(SendWindow(capacity: 64).claimLimit == 64)
    }

    @Test("a full window claims nothing until sends come back")
    func fullWindowWaits() {
        var window = SendWindow(capacity: 64)
        window.started(64)
        #expect(window.claimLimit == nil)
        window.finished(1)
        #expect(window.claimLimit == nil)
    }

    @Test("room for a quarter of the window or more is claimed, less is not")
    func claimsWaitForAQuarterOfTheWindow() {
        var window = SendWindow(capacity: 64)
        window.started(64)
        window.finished(15)
        #expect(window.claimLimit == nil)
        window.finished(1)
        #expect(window.claimLimit == 16)
        window.started(10)
        #expect(window.claimLimit == nil)
    }

    @Test("once every send came back the worker claims again, however few rows the last claim had")
    func anEmptyWindowAlwaysClaims() {
        var window = SendWindow(capacity: 64)
        window.started(3)
        #expect(window.claimLimit == 61)
        window.finished(3)
        #expect(window.inFlight == 0)
        #expect(window.claimLimit == 64)
    }

    @Test("a window of one is a plain claim–send–record loop")
    func windowOfOne() {
        var window = SendWindow(capacity: 1)
        #expect(window.claimLimit == 1)
        window.started(1)
        #expect(window.claimLimit == nil)
        window.finished(1)
        #expect(window.claimLimit == 1)
    }

    @Test("a nonsensical capacity becomes one, and finishing more than started never goes below zero")
    func boundsAreKept() {
        var window = SendWindow(capacity: 0)
        #expect(window.capacity == 1)
        window.finished(5)
        #expect(window.inFlight == 0)
    }
}

/// When a worker holds a few outcomes back to record them together.
struct SendWindowRecordingTests {
    @Test("a few outcomes wait for more while many sends are still out")
    func fewOutcomesWaitForMore() {
        var window = SendWindow(capacity: 64)
        window.started(64)
        #expect(window.isWorthWaiting(finished: 1))
        #expect(window.isWorthWaiting(finished: 15))
    }

    @Test("a quarter of the window, or every send that was out, is recorded at once")
    func enoughOutcomesAreRecordedAtOnce() {
        var window = SendWindow(capacity: 64)
        window.started(64)
        #expect(!window.isWorthWaiting(finished: 16))
        window.finished(60)
        #expect(!window.isWorthWaiting(finished: 4))
    }
}
