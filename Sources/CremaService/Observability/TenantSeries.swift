/// The Prometheus series that name tenants, written by the delivery workers and held back by `/metrics` from anyone
/// but the bootstrap admin key: which brands share a Crema, with their volumes, is not for anyone who can reach it.
public enum TenantSeries {
    /// APNs requests by tenant, push type and outcome.
    public static let pushes = "crema_apns_tenant_pushes_total"
    /// Every series that names a tenant.
    public static let names: Set<String> = [pushes]
}
