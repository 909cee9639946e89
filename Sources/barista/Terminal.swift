import CremaAPI
import CremaCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where output goes and how it looks: ANSI color only when stdout is a terminal and `NO_COLOR` is unset
/// (https://no-color.org), plain text when piped.
struct Terminal: Sendable {
    let isTTY: Bool
    let color: Bool

    static let current: Terminal = {
        let tty = isatty(STDOUT_FILENO) == 1
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let dumb = ProcessInfo.processInfo.environment["TERM"] == "dumb"
        return Terminal(isTTY: tty, color: tty && !noColor && !dumb)
    }()

    enum Style: String {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", cyan = "36"
    }

    func paint(_ text: String, _ style: Style) -> String {
        color ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    func line(_ text: String = "") { write(text + "\n") }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// One `--json` line: sorted keys, so scripts and diffs see a stable shape.
    func json(_ value: some Encodable) throws {
        line(String(decoding: try WireCoding.encoder.encode(value), as: UTF8.self))
    }
}

/// A table whose columns line up by display width (Japanese and emoji count two columns).
struct Table {
    var header: [String]
    var rows: [[String]] = []
    /// Columns that may be cut with "…" to `maxWidth`.
    var maxWidth: [Int: Int] = [:]

    /// Lines ready to print; `style` colors a cell after padding, so escapes never break alignment.
    func render(terminal: Terminal, indent: String = "", style: (_ row: Int, _ column: Int, _ text: String) -> String = { _, _, t in t })
        -> [String]
    {
        let cells = rows.map { row in
            row.enumerated().map { index, text in maxWidth[index].map { DisplayWidth.truncate(text, toColumns: $0) } ?? text }
        }
        var widths = header.map { DisplayWidth.columns(of: $0) }
        for row in cells {
            for (index, text) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], DisplayWidth.columns(of: text))
            }
        }
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - DisplayWidth.columns(of: text)))
        }
        func join(_ parts: [String]) -> String {
            var line = indent + parts.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
        var lines = [terminal.paint(join(header.enumerated().map { pad($1, widths[$0]) }), .bold)]
        for (rowIndex, row) in cells.enumerated() {
            let last = row.count - 1
            lines.append(
                join(row.enumerated().map { index, text in
                    style(rowIndex, index, index == last ? text : pad(text, widths[index]))
                }))
        }
        return lines
    }
}
