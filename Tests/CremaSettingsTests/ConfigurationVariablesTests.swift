import CremaSettings
import Foundation
import Testing

/// `crema --help`, docs/operations.md and the sources name the same environment variables.
@Suite struct ConfigurationVariablesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func matches(_ pattern: String, in text: String, group: Int = 1) throws -> Set<String> {
        let regex = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        return Set(regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range(at: group), in: text).map { String(text[$0]) } })
    }

    @Test("the configuration table of docs/operations.md lists exactly the variables crema --help prints")
    func theDocsTableIsTheHelpTable() throws {
        let docs = try String(contentsOf: Self.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = try #require(docs.components(separatedBy: "## Configuration").dropFirst().first?.components(separatedBy: "\n## ").first)
        let documented = try Self.matches(#"^\| ([^|]+) \|"#, in: section).flatMap { cell in
            try Self.matches(#"`((?:CREMA_|LOG_LEVEL)[A-Z_]*)`"#, in: cell)
        }
        #expect(Set(documented) == Set(ConfigurationVariables.all.map(\.name)))
    }

    @Test("every variable the server's sources read is in the table")
    func theSourcesReadOnlyListedVariables() throws {
        var read = Set<String>()
        for module in ["CremaSettings", "CremaRuntime", "CremaServer", "CremaDelivery", "CremaService", "CremaStore", "CremaPostgres", "crema"] {
            let folder = Self.root.appendingPathComponent("Sources/\(module)")
            for case let file as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)! where file.pathExtension == "swift" {
                read.formUnion(try Self.matches(#""((?:CREMA_|LOG_LEVEL)[A-Z_]*[A-Z])""#, in: try String(contentsOf: file, encoding: .utf8)))
            }
        }
        let listed = Set(ConfigurationVariables.all.map(\.name))
        #expect(read.subtracting(listed).isEmpty, "read but not documented: \(read.subtracting(listed).sorted())")
        // Sanity: the scan found the variables (a wrong path would make the check above pass on nothing).
        #expect(read.contains("CREMA_DATABASE_URL") && read.contains("CREMA_RATE_LIMIT"))
    }
}
