// swift-tools-version:6.2
import PackageDescription

/// One set of strictness settings, passed to every target (Hummingbird's convention).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),  // SE-0335
    .enableUpcomingFeature("MemberImportVisibility"),  // SE-0444
    .enableUpcomingFeature("InternalImportsByDefault"),  // SE-0409
]

let package = Package(
    name: "crema",
    // iOS: only `CremaActivityModels` is meant for the app; the Live Activity push-to-start contract needs 17.2.
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "crema", targets: ["crema"]),
        .library(name: "CremaCore", targets: ["CremaCore"]),
        /// What the iOS app adds to decode Crema's Live Activity payloads: Foundation only.
        .library(name: "CremaActivityModels", targets: ["CremaActivityModels"]),
        .library(name: "CremaAPNsProtocol", targets: ["CremaAPNsProtocol"]),
        .library(name: "CremaAPNsKey", targets: ["CremaAPNsKey"]),
        .library(name: "CremaAPNs", targets: ["CremaAPNs"]),
        .library(name: "CremaAPNsSimulator", targets: ["CremaAPNsSimulator"]),
        /// The libpq driver, a product so the driver benchmark (bench/driver) can race it against postgres-nio.
        .library(name: "CremaPostgres", targets: ["CremaPostgres"]),
        // MARK: - barista product
        .executable(name: "barista", targets: ["barista"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        // Already resolved through Hummingbird; named so the server's connection guard can read HTTP parts.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Delivery: APNs over HTTP/2 + TLS, ES256 JWTs, and the simulator's self-signed certificate.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        // Already resolved through Hummingbird; named so routes and the connection guard can spell HTTP status and fields.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Already resolved through swift-certificates; named so the simulator can write its certificate as PEM.
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.1.0"),
        // Tests only: reads /openapi.yaml so the contract test can hold the wire types against it.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        // Customer tokens: the brand's backend signs a short-lived JWT (ES256 or HS256) that Crema verifies.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.0.0"),
        // Tests only: a virtual clock the tests advance, so the worker loops run on virtual time.
        .package(url: "https://github.com/pointfreeco/swift-clocks.git", from: "1.1.1"),
    ],
    targets: [
        // MARK: - The app's wire types: Foundation only, compiles for iOS (no server dependency ever).
        .target(name: "CremaActivityModels", swiftSettings: swiftSettings),

        // MARK: - The APNs protocol: push types, bodies and their size cap, answer classification, JSONValue.
        // Foundation only; knows nothing of orders, so the client and the simulator depend on it alone.
        .target(name: "CremaAPNsProtocol", swiftSettings: swiftSettings),
        // The provider's signing key (.p8): parsing, PEM, Key ID and Team ID. Beside the protocol rather than in the
        // transport, so what stores and checks keys (CremaService) needs no HTTP/2 client; swift-crypto, kept out of the protocol.
        .target(
            name: "CremaAPNsKey",
            dependencies: ["CremaAPNsProtocol", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Calendar arithmetic for timestamp text, shared by the API's wire format and the driver: no dependencies.
        .target(name: "CremaCivilTime", swiftSettings: swiftSettings),
        // The one injected clock (wall time and sleep), so no library reads the time or sleeps on its own.
        .target(name: "CremaClock", swiftSettings: swiftSettings),

        // MARK: - Pure domain core: no I/O. It depends on the app's wire types it projects into and on the APNs protocol.
        .target(name: "CremaCore", dependencies: ["CremaActivityModels", "CremaAPNsProtocol"], swiftSettings: swiftSettings),

        // MARK: - PostgreSQL through libpq.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Linux's epoll, which the driver's event loop waits on (Glibc's module does not export it).
        .systemLibrary(name: "CEpoll"),
        .target(
            name: "CremaPostgres",
            dependencies: [
                "CLibPQ",
                "CEpoll",
                "CremaCivilTime",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // MARK: - The HTTP API's wire types: requests, answers, errors, JSON conventions. The server and `barista`
        // both use them, so a field is named once.
        .target(
            name: "CremaAPI",
            dependencies: ["CremaCore", "CremaActivityModels", "CremaAPNsProtocol", "CremaCivilTime"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CremaStore",
            dependencies: [
                "CremaClock", "CremaCore", "CremaPostgres", "CremaActivityModels", "CremaAPNsProtocol", "CremaCivilTime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Migrations")],
            swiftSettings: swiftSettings
        ),
        // MARK: - Credentials as values: API keys (generated and presented), the principal a key stands for, the master
        // key that seals secrets. Crypto only, no I/O, so the settings can hold them without the application layer.
        .target(
            name: "CremaCredentials",
            dependencies: ["CremaAPNsProtocol", "CremaCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // MARK: - The application layer: each command as load, decide (core), plan, persist (store), one transaction.
        .target(
            name: "CremaService",
            dependencies: [
                // No CremaAPI: the service speaks in its own commands and records; CremaServer translates the wire
                // (scripts/check-imports holds it).
                "CremaCredentials", "CremaActivityModels", "CremaAPNsKey", "CremaAPNsProtocol", "CremaCivilTime", "CremaCore", "CremaStore",
                "CremaPostgres", "CremaClock",
                .product(name: "Crypto", package: "swift-crypto"),
                // The stream hub: a service of the process that logs.
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - APNs: the HTTP/2 client (JWT ES256) and an APNs-compatible simulator to test and demo against.
        .target(
            name: "CremaAPNs",
            dependencies: [
                "CremaAPNsKey", "CremaAPNsProtocol", "CremaClock",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CremaAPNsSimulator",
            dependencies: [
                "CremaAPNsProtocol", "CremaClock",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Delivery: the APNs outbox dispatcher, the webhook dispatcher and the lifecycle sweeper. No HTTP server
        // (no Hummingbird), so `crema dispatch` and the sweeper stand apart from the API.
        .target(
            name: "CremaDelivery",
            dependencies: [
                "CremaAPI", "CremaAPNs", "CremaAPNsKey", "CremaAPNsProtocol", "CremaCore", "CremaCredentials", "CremaPostgres",
                "CremaService", "CremaStore", "CremaClock",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Webhooks: HTTP/1.1 or HTTP/2 to receivers, DNS off the cooperative pool, a receiver's private CA.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - What the environment says, parsed and checked (CREMA_* variables, API keys, connection limits). Its only I/O
        // is at start, on files the environment names (an es256 public key read, the webhook CA checked readable); nothing it
        // depends on does I/O (scripts/check-imports keeps the store, the driver, the services and NIO out of its reach).
        .target(
            name: "CremaSettings",
            dependencies: ["CremaAPNsProtocol", "CremaCore", "CremaCredentials"],
            swiftSettings: swiftSettings
        ),

        // MARK: - The composition root (CremaProcess): every part of a process but the HTTP side, and their start order.
        // No Hummingbird, so `crema dispatch` reaches no HTTP server code.
        .target(
            name: "CremaRuntime",
            dependencies: [
                "CremaAPNs", "CremaAPNsKey", "CremaAPNsProtocol", "CremaClock", "CremaAPNsSimulator", "CremaCore", "CremaDelivery", "CremaPostgres",
                "CremaService", "CremaSettings", "CremaStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - The HTTP server and API only: routes, auth, errors, SSE, dashboard, metrics.
        .target(
            name: "CremaServer",
            dependencies: [
                // No CremaStore, no CremaPostgres: every route goes through a service (scripts/check-imports holds it).
                "CremaAPNsProtocol", "CremaCore", "CremaAPI", "CremaService", "CremaCivilTime", "CremaSettings", "CremaClock",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // The connection guard (deadlines, cap, protocol-level error documents) sits in the channel pipeline.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                // Crema's own HTTP server: Hummingbird's connection loop, its own accept and shutdown (HTTPServer).
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                // The server's event loops (MultiThreadedEventLoopGroup).
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "crema",
            dependencies: [
                "CremaServer", "CremaRuntime", "CremaSettings", "CremaDelivery", "CremaService", "CremaPostgres",
                "CremaStore", "CremaAPNs", "CremaAPNsKey", "CremaAPNsSimulator", "CremaAPNsProtocol", "CremaCore",
                "CremaAPI", "CremaClock",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - barista: the baristas' terminal over the HTTP API (no server code: the wire types are CremaAPI's).
        .executableTarget(
            name: "barista",
            dependencies: [
                "CremaAPI", "CremaCore", "CremaAPNsProtocol", "CremaActivityModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Test support: a fresh, migrated database per suite on the cluster scripts/test starts.
        .target(
            name: "CremaTestSupport",
            dependencies: [
                "CremaPostgres", "CremaStore", "CremaClock",
                // Orders placed through the real application layer (OrderServiceFixture).
                "CremaService", "CremaCore",
                // The virtual clock under the tests' CremaClock.
                .product(name: "Clocks", package: "swift-clocks"),
                // The webhook receiver the tests run (HTTP and HTTPS).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/CremaTestSupport",
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests (Swift Testing). Postgres-backed suites need CREMA_TEST_DATABASE_URL (scripts/test).
        .testTarget(
            name: "CremaCoreTests",
            dependencies: [
                "CremaCore", "CremaActivityModels", "CremaAPNsProtocol",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Golden"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaAPITests",
            dependencies: [
                "CremaAPI", "CremaCore", "CremaAPNsProtocol", "CremaActivityModels", "CremaTestSupport", .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CremaCivilTimeTests", dependencies: ["CremaCivilTime"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CremaAPNsProtocolTests",
            dependencies: ["CremaAPNsProtocol"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaPostgresTests",
            dependencies: [
                "CremaPostgres", "CremaTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaStoreTests",
            dependencies: [
                "CremaStore", "CremaService", "CremaCore", "CremaActivityModels", "CremaAPNsProtocol", "CremaPostgres",
                "CremaTestSupport", "CremaClock",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaAPNsTests",
            dependencies: [
                "CremaAPNs", "CremaAPNsKey", "CremaAPNsSimulator", "CremaAPNsProtocol", "CremaCore", "CremaClock",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // The connection handler's tests drive HTTP/2 frames over TLS on an embedded channel.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaServerTests",
            dependencies: [
                "CremaServer", "CremaRuntime", "CremaSettings", "CremaDelivery", "CremaService", "CremaAPI",
                "CremaStore", "CremaCore", "CremaAPNsProtocol", "CremaPostgres", "CremaTestSupport", "CremaAPNs",
                "CremaAPNsKey", "CremaAPNsSimulator", "CremaClock",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - One test target per library whose tests need no HTTP server (docs/design.md §2). The suites that drive
        // delivery, webhooks or tenancy end to end through the HTTP API stay in CremaServerTests.
        .testTarget(
            name: "CremaDeliveryTests",
            dependencies: [
                "CremaDelivery", "CremaService", "CremaStore", "CremaCore", "CremaAPNsProtocol", "CremaPostgres", "CremaTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaServiceTests",
            dependencies: [
                "CremaService", "CremaStore", "CremaAPI", "CremaCore", "CremaPostgres", "CremaClock", "CremaTestSupport",
                "CremaAPNsProtocol", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaSettingsTests",
            dependencies: ["CremaSettings", "CremaService", "CremaCore", "CremaAPNsProtocol"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaRuntimeTests",
            dependencies: ["CremaRuntime", "CremaSettings", "CremaAPNsSimulator", "CremaClock", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CremaAPNsSimulatorTests",
            dependencies: ["CremaAPNsSimulator", "CremaAPNsProtocol"],
            swiftSettings: swiftSettings
        ),

        // MARK: - barista tests: the real binary against a real `crema serve` on a fresh database.
        .testTarget(
            name: "BaristaTests",
            dependencies: [
                // "barista" only so the binary is built before the tests run it; they never import it.
                "barista", "CremaCore", "CremaAPI", "CremaAPNsProtocol", "CremaPostgres", "CremaTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
