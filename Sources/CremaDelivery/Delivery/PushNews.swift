import CremaStore
import Synchronization

/// What the change feed told a worker since it last looked: the tenants whose commits queued pushes, or that it may
/// have missed some (`ChangeFeed.Change.everything`). The feed's task adds, the worker takes it all before it picks
/// its next turn (`ClaimTurns`), so news that arrives mid-claim waits for the next one, never lost.
final class PushNews: Sendable {
    private struct News {
        var tenants: Set<String> = []
        var everything = false
    }

    private let news = Mutex(News())

    /// Adds what one change says.
    func add(_ change: ChangeFeed.Change) {
        news.withLock { news in
            switch change {
            case .stores(let stores): news.tenants.formUnion(stores.lazy.map(\.tenant))
            case .everything: news.everything = true
            }
        }
    }

    /// Hands everything heard since the last call to `turns`.
    func deliver(to turns: inout ClaimTurns) {
        let taken = news.withLock { news in
            defer { news = News() }
            return news
        }
        turns.heard(of: taken.tenants)
        if taken.everything { turns.mayHaveMissedWork() }
    }
}
