public import CremaClock
public import CremaCore
public import CremaService
public import CremaStore
import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// DNS for webhook hosts: `getaddrinfo` blocks, so it runs on NIO's blocking thread pool, never on Swift's
/// cooperative pool. Returns every address (4 or 16 bytes each), so the caller can refuse a host with any private one.
enum WebhookResolver {
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var description: String { String(cString: gai_strerror(code)) }
    }

    static func addresses(of host: String) async throws -> [[UInt8]] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, nil, &hints, &list)
            guard status == 0 else { throw Failure(code: status) }
            defer { freeaddrinfo(list) }
            var found: [[UInt8]] = []
            var next = list
            while let entry = next {
                if let address = entry.pointee.ai_addr {
                    switch Int32(entry.pointee.ai_family) {
                    case AF_INET:
                        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                            found.append(withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) })
                        }
                    case AF_INET6:
                        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                            found.append(withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) })
                        }
                    default: break
                    }
                }
                next = entry.pointee.ai_next
            }
            // getaddrinfo lists an address once per socket type and protocol it allows.
            var unique: [[UInt8]] = []
            for address in found where !unique.contains(address) { unique.append(address) }
            return unique
        }
    }
}

extension WebhookService {
    /// The webhook service with the real DNS resolver (run off the cooperative pool); public for the composition roots
    /// (`crema serve`, `crema dispatch`, `CremaApplication`) and the tests.
    public static func resolvingDNS(
        database: CremaDatabase, limits: TenantLimitsDirectory, masterKey: MasterKey?, allowsPrivateAddresses: Bool,
        policy: WebhookPolicy = WebhookPolicy(), idempotency: IdempotencyGate? = nil, clock: CremaClock
    ) -> WebhookService {
        WebhookService(
            database: database, limits: limits, masterKey: masterKey, allowsPrivateAddresses: allowsPrivateAddresses, policy: policy,
            resolve: { host in try await WebhookResolver.addresses(of: host) }, idempotency: idempotency, clock: clock)
    }
}
