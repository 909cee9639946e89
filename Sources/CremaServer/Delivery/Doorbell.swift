/// Wakes idle dispatcher workers: rung on every order change, waited on with a timeout (the poll fallback). A ring
/// with nobody waiting is remembered once, so a notification that arrives mid-batch is never lost.
actor Doorbell {
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var next = 0
    private var rung = false

    func ring() {
        guard !waiters.isEmpty else {
            rung = true
            return
        }
        for waiter in waiters.values { waiter.resume() }
        waiters = [:]
    }

    /// Returns when rung, after `timeout`, or when the task is cancelled.
    func wait(timeout: Duration) async {
        if rung {
            rung = false
            return
        }
        next += 1
        let id = next
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.park(id) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                await self.release(id)
            }
            await group.next()
            group.cancelAll()
            self.release(id)
        }
    }

    private func park(_ id: Int) async {
        await withCheckedContinuation { continuation in waiters[id] = continuation }
    }

    private func release(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }
}
