import CremaAPI
import ArgumentParser
import Foundation

/// Runs a command body with resolved settings and a client, and turns every failure into one line on
/// stderr (plus `{"error":…}` on stdout with `--json`) and its documented exit status.
enum Runner {
    static func run(
        _ options: GlobalOptions, name: String? = nil,
        _ body: (_ settings: Settings, _ client: CremaClient, _ terminal: Terminal) async throws -> Void
    ) async throws {
        let terminal = Terminal.current
        var server = options.server ?? "Crema"
        do {
            let settings = try options.settings(name: name)
            server = settings.server.value
            let key = try settings.requireKey()
            try await CremaClient.with(server: settings.server.value, key: key) { client in
                try await body(settings, client, terminal)
            }
        } catch let error as BaristaError {
            try fail(error, json: options.json, terminal: terminal)
        } catch let failure as APIFailure {
            try fail(failure.asBaristaError(server: server), json: options.json, terminal: terminal)
        }
    }

    /// Settles a failure: the one line, the JSON form, the exit status.
    static func fail(_ error: BaristaError, json: Bool, terminal: Terminal) throws -> Never {
        Terminal.error("barista: \(error.message)")
        if json { try? terminal.json(ErrorOutput(error: .init(error))) }
        throw ExitCode(error.status.rawValue)
    }

    /// `{"error":{"code","message","exit_code","order"}}`
    struct ErrorOutput: Encodable {
        var error: Body

        struct Body: Encodable {
            var code: String?
            var message: String
            var exitCode: Int32
            var order: OrderResponse?

            init(_ error: BaristaError) {
                code = error.code
                message = error.message
                exitCode = error.status.rawValue
                order = error.current
            }

            enum CodingKeys: String, CodingKey {
                case code, message, order
                case exitCode = "exit_code"
            }

            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(code, forKey: .code)
                try c.encode(message, forKey: .message)
                try c.encode(exitCode, forKey: .exitCode)
                try c.encode(order, forKey: .order)
            }
        }
    }
}
