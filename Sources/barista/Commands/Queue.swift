import CremaAPI
import ArgumentParser
import CremaCore
import Foundation

extension Barista {
    struct Queue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the store's open orders, grouped by state, oldest first.",
            discussion: """
                With --watch the view stays live (it polls every 2 seconds): on a terminal it redraws in place; \
                when piped it prints the queue again only when an order changed (with --json: one line per change). \
                Ctrl-C stops it.
                """)

        @Flag(help: "Keep the view live until Ctrl-C.") var watch = false
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let (watch, json) = (watch, options.json)
            try await Runner.run(options) { settings, client, terminal in
                let store = try settings.requireStore(for: "The queue")
                guard watch else {
                    let board = try await client.board(store: store)
                    try Self.show(board, at: Date(), warning: nil, json: json, terminal: terminal)
                    return
                }
                let feed: any BoardFeed = PollingBoardFeed(client: client, store: store, interval: .seconds(2))
                var last: BoardResponse?
                var lastSignature: [String]?
                var firstFrame = true
                for try await update in feed.updates() {
                    var warning: String?
                    let at: Date
                    switch update {
                    case .board(let board, let time):
                        last = board
                        at = time
                    case .unreachable(let error, let time):
                        warning = error.message
                        at = time
                    }
                    guard let board = last else { continue }
                    if terminal.isTTY && !json {
                        // Home, draw each line over the old one, clear what is left: no flicker, no scrollback spam.
                        var lines = Self.render(board, at: at, terminal: terminal)
                        lines.append("")
                        lines.append(terminal.paint(
                            warning.map { "⚠ \($0) Retrying…" } ?? "watching \(board.store.storeID) · \(Describe.clock(at)) · Ctrl-C to stop",
                            warning == nil ? .dim : .red))
                        terminal.write((firstFrame ? "\u{1B}[2J" : "") + "\u{1B}[H" + lines.map { $0 + "\u{1B}[K\n" }.joined() + "\u{1B}[J")
                        firstFrame = false
                    } else {
                        let signature = Self.signature(board)
                        if let warning { Terminal.error("barista: \(warning)") }
                        guard signature != lastSignature else { continue }
                        if !json && lastSignature != nil { terminal.line() }
                        lastSignature = signature
                        try Self.show(board, at: at, warning: nil, json: json, terminal: terminal)
                    }
                }
            }
        }

        /// What changes the queue: ids and versions of the open orders.
        static func signature(_ board: BoardResponse) -> [String] {
            OrderState.open.flatMap { state in board.orders(in: state).map { "\($0.id)@\($0.version)" } }
        }

        static func show(_ board: BoardResponse, at: Date, warning: String?, json: Bool, terminal: Terminal) throws {
            if json {
                try terminal.json(QueueOutput(board: board, at: at))
            } else {
                render(board, at: at, terminal: terminal).forEach { terminal.line($0) }
            }
        }

        /// The queue as lines: one aligned table with a heading per state.
        static func render(_ board: BoardResponse, at now: Date, terminal: Terminal) -> [String] {
            let open = OrderState.open.map { ($0, board.orders(in: $0)) }
            let count = open.reduce(0) { $0 + $1.1.count }
            var lines = [terminal.paint("\(board.store.name) (\(board.store.storeID))", .bold) + " · \(count) open · \(Describe.clock(now))"]
            var table = Table(header: ["#", "NAME", "AGE", "ETA", "ITEMS", "BARISTA"], maxWidth: [1: 16, 4: 48, 5: 16])
            var groups: [(state: OrderState, range: Range<Int>)] = []
            var late: Set<Int> = []
            for (state, orders) in open {
                let start = table.rows.count
                for order in orders {
                    var eta = Describe.eta(order.eta, now: now)
                    if state == .ready { eta = (order.pickupPoint.map { "at \($0)" } ?? "ready", false) }
                    if eta.late { late.insert(table.rows.count) }
                    table.rows.append([
                        "\(order.number)", order.displayName, Describe.duration(now.timeIntervalSince(order.placedAt)), eta.text,
                        Describe.items(order.items), order.barista ?? "",
                    ])
                }
                groups.append((state, start..<table.rows.count))
            }
            let rendered = table.render(terminal: terminal, indent: "  ") { row, column, text in
                column == 3 && late.contains(row) ? terminal.paint(text, .red) : text
            }
            let colors: [OrderState: Terminal.Style] = [.queued: .yellow, .preparing: .blue, .ready: .green]
            for group in groups {
                lines.append(terminal.paint("\(group.state.rawValue.uppercased()) (\(group.range.count))", colors[group.state] ?? .bold))
                if group.range.isEmpty {
                    lines.append("  —")
                } else {
                    lines.append(rendered[0])
                    lines.append(contentsOf: group.range.map { rendered[$0 + 1] })
                }
            }
            return lines
        }
    }
}

/// `queue --json`: `{"store":…,"at":…,"columns":{"queued":[…],"preparing":[…],"ready":[…]}}`, oldest first.
struct QueueOutput: Encodable {
    var store: StoreResponse
    var at: Date
    var columns: [String: [OrderResponse]]

    init(board: BoardResponse, at: Date) {
        store = board.store
        self.at = at
        columns = Dictionary(uniqueKeysWithValues: OrderState.open.map { ($0.rawValue, board.orders(in: $0)) })
    }
}
