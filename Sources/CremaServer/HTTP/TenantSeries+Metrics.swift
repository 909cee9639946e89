import CremaService

/// `/metrics` is unauthenticated (scrapers rarely hold keys), so the series that name tenants (`TenantSeries`) are
/// left out of the answer unless the bootstrap admin key (`CREMA_ADMIN_KEY`) is presented.
extension TenantSeries {
    /// `text` (Prometheus exposition format) without the lines of the tenant series: samples and their `# HELP`/`# TYPE`.
    static func removed(from text: String) -> String {
        var kept = ""
        kept.reserveCapacity(text.utf8.count)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var name = line
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { name = line.dropFirst(7) }
            let metric = name.prefix { $0 != "{" && $0 != " " }
            if names.contains(String(metric)) { continue }
            kept += line
            kept += "\n"
        }
        if !text.hasSuffix("\n"), kept.hasSuffix("\n") { kept.removeLast() }
        return kept
    }
}
