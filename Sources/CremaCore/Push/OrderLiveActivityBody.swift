import CremaAPNsProtocol
import CremaActivityModels

/// A Live Activity push as Crema sends it: the `aps` dictionary ActivityKit reads, and next to it `crema`, the
/// order's identity, which the app's own code reads (APNs ignores custom keys inside `aps`).
struct OrderLiveActivityBody: Encodable {
    var aps: APNsBodyBuilder.LiveActivityPayload.APS
    /// Left out (not `null`) when absent.
    var crema: OrderActivityIdentity?
}
