import CremaAPI
import Foundation

/// Where `queue --watch` gets fresh boards from. Today it polls; when Crema serves `GET /v1/stream`
/// (the dashboard issue), a stream-backed feed replaces ``PollingBoardFeed`` behind this protocol and
/// ``Barista/Queue`` does not change.
protocol BoardFeed: Sendable {
    /// Boards as they change (or on every poll); a failure after the first board is reported as
    /// `.unreachable` and the feed keeps trying, so a blip in the Wi-Fi does not end the view.
    func updates() -> AsyncThrowingStream<BoardUpdate, any Error>
}

enum BoardUpdate: Sendable {
    case board(BoardResponse, at: Date)
    case unreachable(BaristaError, at: Date)
}

/// Reads the board every `interval`.
struct PollingBoardFeed: BoardFeed {
    let client: CremaClient
    let store: String
    let interval: Duration

    func updates() -> AsyncThrowingStream<BoardUpdate, any Error> {
        let (client, store, interval) = (client, store, interval)
        return AsyncThrowingStream { continuation in
            let task = Task {
                var first = true
                while !Task.isCancelled {
                    do {
                        let board = try await client.board(store: store)
                        continuation.yield(.board(board, at: Date()))
                    } catch let error as BaristaError where !first && error.status == .unavailable {
                        continuation.yield(.unreachable(error, at: Date()))
                    } catch {
                        // The first read decides whether watching makes sense at all (bad key, no store, no server).
                        continuation.finish(throwing: error)
                        return
                    }
                    first = false
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
