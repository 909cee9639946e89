@testable import CremaDelivery
import Testing

/// Whose turn a dispatcher worker claims for: tenants with due work take turns, a tenant alone is claimed for every
/// time, and the database is asked only when the worker may have missed work.
struct ClaimTurnsTests {
    /// Turns after a survey found `tenants`.
    static func surveyed(_ tenants: [String]) -> ClaimTurns {
        var turns = ClaimTurns()
        turns.surveyed(tenants)
        return turns
    }

    @Test("a worker that has just started surveys before its first claim")
    func aNewWorkerSurveysFirst() {
        #expect(ClaimTurns().next() == .survey)
    }

    @Test("tenants with work take turns in tenant order, wrapping around, while each still has more")
    func tenantsTakeTurns() {
        var turns = Self.surveyed(["pier", "harbor", "default"])
        var order: [String] = []
        for _ in 0..<6 {
            guard case .claim(let tenant) = turns.next() else {
                Issue.record("expected a claim")
                return
            }
            order.append(tenant)
            turns.claimed(tenant, count: 64, limit: 64)
        }
        #expect(order == ["default", "harbor", "pier", "default", "harbor", "pier"])
    }

    @Test("a tenant with a backlog is claimed for again only after every other tenant with work had its turn")
    func aBacklogWaitsForTheOthers() {
        var turns = Self.surveyed(["busy"])
        turns.claimed("busy", count: 64, limit: 64)
        turns.heard(of: ["quiet"])
        #expect(turns.next() == .claim("quiet"))
        turns.claimed("quiet", count: 1, limit: 64)
        #expect(turns.next() == .claim("busy"))
    }

    @Test("a tenant alone is claimed for every time")
    func aTenantAloneHasEveryTurn() {
        var turns = Self.surveyed(["solo"])
        for _ in 0..<3 {
            #expect(turns.next() == .claim("solo"))
            turns.claimed("solo", count: 64, limit: 64)
        }
    }

    @Test("a claim that came back short drops its tenant until news of more work")
    func aShortClaimDropsTheTenant() {
        var turns = Self.surveyed(["a", "b"])
        turns.claimed("a", count: 3, limit: 64)
        #expect(turns.waiting == ["b"])
        turns.claimed("b", count: 0, limit: 64)
        #expect(turns.next() == .idle)
        turns.heard(of: ["a"])
        #expect(turns.next() == .claim("a"))
    }

    @Test("news of a tenant already waiting changes nothing, and news never asks the database")
    func newsIsMergedWithoutASurvey() {
        var turns = Self.surveyed(["a"])
        turns.heard(of: ["a", "a"])
        #expect(turns.waiting == ["a"])
        turns.heard(of: ["c", "b"])
        #expect(turns.waiting == ["a", "b", "c"])
        #expect(turns.next() == .claim("a"))
    }

    @Test("after possibly missing work the worker surveys once, and the survey's answer replaces what it believed")
    func aMissedChangeMeansOneSurvey() {
        var turns = Self.surveyed(["a", "b"])
        turns.mayHaveMissedWork()
        #expect(turns.next() == .survey)
        turns.surveyed(["c"])
        #expect(turns.waiting == ["c"])
        #expect(turns.next() == .claim("c"))
    }

    @Test("a survey that finds nobody leaves the worker idle, not surveying again")
    func anEmptySurveyMeansIdle() {
        var turns = ClaimTurns()
        turns.surveyed([])
        #expect(turns.next() == .idle)
    }

    @Test("the turn after a tenant that left goes to the next one after it in order")
    func theTurnContinuesPastATenantThatLeft() {
        var turns = Self.surveyed(["a", "b", "c"])
        turns.claimed("a", count: 64, limit: 64)
        turns.claimed("b", count: 0, limit: 64)
        #expect(turns.next() == .claim("c"))
        turns.claimed("c", count: 64, limit: 64)
        #expect(turns.next() == .claim("a"))
    }
}
