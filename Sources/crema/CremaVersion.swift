/// The one place the release number lives: `crema --version` prints it (operators and bug reports quote it).
/// It moves with the API document's `info.version` while both are 0.x.
enum CremaVersion {
    static let current = "0.1.0"
}
