// The values the application layer hands its callers, re-exported one by one so that the HTTP server (CremaServer)
// reads them without importing the store or the driver: it sees these records and errors, never a repository, a
// pool or a connection. A read's record is the store's own type (one definition, not a copy per layer); what a caller
// may do with the store goes through the services in this module.

// Records the reads return.
@_exported public import struct CremaStore.OrderDetail
@_exported public import struct CremaStore.OrderPage
@_exported public import struct CremaStore.Board
@_exported public import struct CremaStore.DeliveryLogEntry
@_exported public import struct CremaStore.RegisteredToken
@_exported public import struct CremaStore.CustomerOrder
@_exported public import struct CremaStore.DeliveredActivityPush
@_exported public import struct CremaStore.RelevantOrder
@_exported public import struct CremaStore.ErasureCounts
@_exported public import struct CremaStore.StreamChange
@_exported public import struct CremaStore.StoreKey
@_exported public import struct CremaStore.RedeemedStreamTicket
@_exported public import struct CremaStore.StoredWebhookEndpoint
@_exported public import struct CremaStore.WebhookDeliveryRecord
@_exported public import struct CremaStore.TenantRecord
@_exported public import struct CremaStore.AppRecord
@_exported public import struct CremaStore.StoredAPNsKey
@_exported public import struct CremaStore.StoredAPIKey
@_exported public import struct CremaStore.StoredCustomerTokenSettings
@_exported public import struct CremaStore.StoreChannelRecord
@_exported public import struct CremaStore.PushFunnel
@_exported public import struct CremaStore.RecordedReceipt
// A command's identity (its Idempotency-Key) and its stored answer.
@_exported public import struct CremaStore.IdempotentRequest
@_exported public import struct CremaStore.CommandResponse
// Why the store refused, with its stable codes; a PostgreSQL failure inside it says whether the database is unavailable.
@_exported public import enum CremaStore.StoreError
@_exported public import struct CremaPostgres.PostgresError
// The credentials the services check and seal with (API keys, principals, the master key), a module of values below
// this one so the settings can hold them without the application layer.
@_exported public import CremaCredentials
