/// Why `crema migrate` could not place the schema on Citus; `code` is stable (it starts the command's error line).
public enum CitusDistributionError: Error, Sendable, Equatable {
    /// The table is a Citus local table (a reference table was made while it had a foreign key to it and was still
    /// local), which `create_distributed_table` refuses; `undistribute_table` first, then run `crema migrate` again.
    case citusLocalTable(String)
    /// A table or constraint name outside Crema's own alphabet (lower-case letters, digits, `_`): not Crema's schema.
    case unexpectedName(String)

    public var code: String {
        switch self {
        case .citusLocalTable: "citus_local_table"
        case .unexpectedName: "unexpected_name"
        }
    }
}

extension CitusDistributionError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .citusLocalTable(let table):
            "\(table) is a Citus local table, which cannot be distributed: SELECT undistribute_table('\(table)'), then run crema migrate again"
        case .unexpectedName(let name): "\(name) is not a name of Crema's schema"
        }
    }
}
