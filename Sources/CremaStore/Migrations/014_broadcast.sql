-- Crema schema 014: a store's pickup board on an APNs broadcast channel (docs/broadcast.md, issue #33).
-- One channel per store at most; it belongs to one of the tenant's apps and one APNs environment, as channels do at
-- Apple. The channel id is Apple's; a channel Apple forgot is re-created and counted in `recreations`.
CREATE TABLE store_channels (
    tenant_id          text        NOT NULL,
    store_id           text        NOT NULL,
    bundle_id          text        NOT NULL,
    environment        text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    storage            text        NOT NULL CHECK (storage IN ('none', 'latest')),
    channel_id         text        NOT NULL CHECK (length(channel_id) BETWEEN 1 AND 256),
    created_at         timestamptz NOT NULL,
    recreated_at       timestamptz,
    recreations        integer     NOT NULL DEFAULT 0,
    last_broadcast_at  timestamptz,
    last_status        integer,
    last_reason        text,
    broadcasts         bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, store_id),
    -- No key to apps: the default tenant's app may be only configured (CREMA_APNS_TOPIC), not registered.
    FOREIGN KEY (tenant_id, store_id) REFERENCES stores (tenant_id, store_id)
);
CREATE UNIQUE INDEX store_channels_channel ON store_channels (environment, bundle_id, channel_id);

-- The board waiting to be broadcast: one row per store, so a burst of changes is one row (coalesced by the primary
-- key), sent once `due_at` comes. `changes` counts what the row stands for: a send removes the row only when no
-- change arrived while it was in flight, so nothing written after the board was read is lost. `lease` names the
-- claim a send holds: only that claim may finish or retry the row (one whose lease ran out and was claimed again
-- changes nothing). A claim resets `priority` to 5, so only changes that arrive during the send raise it again.
CREATE TABLE broadcast_outbox (
    tenant_id     text        NOT NULL,
    store_id      text        NOT NULL,
    priority      smallint    NOT NULL CHECK (priority IN (5, 10)),
    due_at        timestamptz NOT NULL,
    changes       bigint      NOT NULL DEFAULT 1,
    attempts      integer     NOT NULL DEFAULT 0,
    leased_until  timestamptz,
    lease         uuid,
    last_error    text,
    PRIMARY KEY (tenant_id, store_id),
    FOREIGN KEY (tenant_id, store_id) REFERENCES store_channels (tenant_id, store_id) ON DELETE CASCADE
);
CREATE INDEX broadcast_outbox_due ON broadcast_outbox (due_at);

-- What a store says on its board until it expires (POST /v1/stores/{store}/announcements).
CREATE TABLE store_announcements (
    tenant_id        text        NOT NULL,
    store_id         text        NOT NULL,
    announcement_id  uuid        NOT NULL,
    message          text        NOT NULL CHECK (length(message) BETWEEN 1 AND 200),
    until            timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, store_id, announcement_id),
    FOREIGN KEY (tenant_id, store_id) REFERENCES stores (tenant_id, store_id)
);
CREATE INDEX store_announcements_until ON store_announcements (tenant_id, store_id, until);
