// swift-tools-version:6.2
import PackageDescription

// Bench only: races Crema's libpq driver against postgres-nio on the same event-shaped transaction
// (bench/driver.sh). Kept out of the product so Crema never depends on postgres-nio.
let package = Package(
    name: "driver-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `crema` is a link to the repository root, so the package is named the same in every clone.
        .package(path: "crema"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .executableTarget(
            name: "DriverBench",
            dependencies: [
                .product(name: "CremaPostgres", package: "crema"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        )
    ]
)
