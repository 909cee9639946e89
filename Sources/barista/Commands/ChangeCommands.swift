import ArgumentParser
import CremaCore
import Foundation

/// The options every changing command shares.
struct ChangeOptions: ParsableArguments {
    @Argument(help: "The order: the number on the cup (42 or #42) or its full id.")
    var order: OrderReference

    @Option(
        name: .customLong("expected-version"),
        help: "Apply only if the order is still at this version (as queue/show printed it). Default: the version read just before sending.")
    var expectedVersion: Int?

    func validate() throws {
        if let expectedVersion, expectedVersion < 1 { throw ValidationError("--expected-version must be 1 or more.") }
    }
}

extension Barista {
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start making an order (queued → preparing).")

        @OptionGroup var change: ChangeOptions
        @Option(help: "Who is making it (overrides CREMA_BARISTA_NAME; default $USER).") var name: String?
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await Change.apply(.started, to: change.order, options: options, expectedVersion: change.expectedVersion, name: name) {
                request, settings in request.barista = settings.name.value
            }
        }
    }

    struct Ready: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark an order ready for pickup.")

        @OptionGroup var change: ChangeOptions
        @Option(help: "Where the customer picks it up (e.g. counter, window).") var at: String?
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let point = at
            try await Change.apply(.ready, to: change.order, options: options, expectedVersion: change.expectedVersion) { request, _ in
                request.pickupPoint = point
            }
        }
    }

    struct Handoff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Hand a ready order to the customer (ready → picked_up).")

        @OptionGroup var change: ChangeOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await Change.apply(.pickedUp, to: change.order, options: options, expectedVersion: change.expectedVersion)
        }
    }

    struct Delay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Push an order's ETA to N minutes from now.")

        @OptionGroup var change: ChangeOptions
        @Option(help: "Minutes from now until the new ETA (1–1440).") var minutes: Int
        @Option(help: "Why (for staff; customers are not shown it).") var reason: String?
        @OptionGroup var options: GlobalOptions

        func validate() throws {
            guard (1...1440).contains(minutes) else { throw ValidationError("--minutes must be from 1 to 1440.") }
        }

        func run() async throws {
            let eta = Date().addingTimeInterval(TimeInterval(minutes * 60))
            let why = reason
            try await Change.apply(.delayed, to: change.order, options: options, expectedVersion: change.expectedVersion) { request, _ in
                request.eta = eta
                request.reason = why
            }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel an order.")

        @OptionGroup var change: ChangeOptions
        @Option(help: "Why (required; for staff).") var reason: String
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let why = reason
            try await Change.apply(.canceled, to: change.order, options: options, expectedVersion: change.expectedVersion) { request, _ in
                request.reason = why
            }
        }
    }
}
