/// A start-up failure worth one clear line on the terminal, and the exit status that says what kind it is.
public struct StartupError: Error, CustomStringConvertible {
    public var message: String
    /// 1 by default; 78 (`EX_CONFIG` of sysexits.h) for a setting that is missing or wrong.
    public var exitCode: Int32 = 1
    public var description: String { message }

    public init(message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    /// A missing or invalid setting: exit 78, so supervisors can tell it from a crash.
    public static func configuration(_ message: String) -> StartupError {
        StartupError(message: message, exitCode: 78)
    }
}
