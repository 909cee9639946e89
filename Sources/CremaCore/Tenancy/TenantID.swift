/// The shape of a tenant id: like a store id, so it can sit in paths and logs without escaping.
public enum TenantID {
    public static func isValid(_ id: String) -> Bool { StoreID.isValid(id) }
}
