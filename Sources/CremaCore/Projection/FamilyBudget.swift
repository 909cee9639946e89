/// Text budgets in display columns for every text Crema puts on a surface (derivation: docs/activity-contract.md).
///
/// One column is half an em of the text's font: a CJK glyph is one em (2 columns) and SF Pro's average Latin
/// advance is about half an em. Each budget is the narrowest supported surface's usable width divided by the
/// column width at the font the contract tells the app to use.
public enum FamilyBudget {
    /// `compactLeading.text`: 52.33 pt − 8 pt corner inset − 16 pt symbol and gap, at 14 pt → 4.
    public static let compactLeading = 4
    /// `compactTrailing.text`: 52.33 pt − 8 pt corner inset, at 14 pt → 6.
    public static let compactTrailing = 6
    /// `minimal.text`: 36.67 pt − 2 × 6 pt inset, at 14 pt → 3.
    public static let minimal = 3
    /// `small.title`: 40 mm watch, 152 pt − 2 × 8 pt margins, at 15 pt semibold → 18.
    public static let smallTitle = 18
    /// `small.status`: the same 136 pt at 12 pt → 22.
    public static let smallStatus = 22
    /// `lockScreen.title`: 371 pt − 2 × 14 pt margins = 343 pt at 17 pt semibold → 40.
    public static let lockTitle = 40
    /// `lockScreen.subtitle`: two lines of 343 pt at 15 pt (45 each), less word-wrap slack → 60.
    public static let lockSubtitle = 60
    /// `lockScreen.detail`: one line of 343 pt at 13 pt → 52.
    public static let lockDetail = 52
    /// `lockScreen.etaRelative`: a trailing label beside the title row, at 13 pt → 20.
    public static let lockETARelative = 20
    /// `lockScreen.etaAbsolute`: "10:05 AM" with room for 24-hour and locale spacing → 10.
    public static let lockETAAbsolute = 10
    /// Attribute texts: store and customer names as the app may show them in a title row → 24 each.
    public static let storeName = 24
    public static let customerName = 24
    /// `attributes.itemsSummary`: a detail line → 52.
    public static let itemsSummary = 52
    /// `pickupPoint` and `baristaName` in the content state, for the app's own layouts → 24 each.
    public static let pickupPoint = 24
    public static let baristaName = 24
    /// Alert title (one bold line of a banner, or the watch) → 40; alert body (four lines of a banner) → 120.
    public static let alertTitle = 40
    public static let alertBody = 120
}
