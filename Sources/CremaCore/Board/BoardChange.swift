/// What one order event means for its store's pickup board: whether the board must be broadcast again, and at which
/// APNs priority. Priority 10 is kept for what a waiting customer acts on (a number called at the counter), so a busy
/// store's routine changes stay within the budget of priority-10 updates Apple allows a channel.
public struct BoardChange: Sendable, Hashable {
    /// 5 (routine: the queue moved, the wait changed) or 10 (an order became ready: someone walks to the counter).
    public var priority: Int

    public init(priority: Int) { self.priority = priority }

    /// Every event moves a number between the board's lists (or off it), so every event changes the board.
    public init(event: OrderEventType) {
        switch event {
        case .ready: priority = 10
        case .placed, .started, .delayed, .pickedUp, .canceled, .expired: priority = 5
        }
    }

    /// A store announcement: shown to everyone waiting, but nobody has to move for it.
    public static let announcement = BoardChange(priority: 5)

    /// How long the board waits after a first change for more before it is broadcast: a burst of changes at a store
    /// becomes one broadcast per settle.
    public static let settleSeconds: Double = 1
}
