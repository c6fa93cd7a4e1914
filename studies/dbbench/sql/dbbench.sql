-- The database microbenchmarks' tables (dbbench), apart from the bookstore's: the CRUD
-- benchmark's users and orders, the bulk insert strategies' items, and the batch job's
-- source rows and results. The join index on orders(user_id) is created and dropped by the
-- benchmark itself (its effect is one of the results).

CREATE TABLE users (
    id         bigserial PRIMARY KEY,
    name       text        NOT NULL,
    email      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE orders (
    id           bigserial PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id),
    amount_cents integer     NOT NULL,
    status       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE items (
    id          bigint  PRIMARY KEY,
    sku         text    NOT NULL,
    name        text    NOT NULL,
    price_cents integer NOT NULL,
    quantity    integer NOT NULL
);

CREATE TABLE batch_source (
    id           bigint PRIMARY KEY,
    payload      text   NOT NULL,
    amount_cents bigint NOT NULL
);

CREATE TABLE batch_results (
    source_id             bigint PRIMARY KEY,
    label                 text   NOT NULL,
    amount_with_tax_cents bigint NOT NULL
);
