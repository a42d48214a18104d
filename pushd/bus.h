/* bus: what pushd hears from the other nodes through the database, and
 * what it tells them. */
#ifndef POSTERN_PUSHD_BUS_H
#define POSTERN_PUSHD_BUS_H

struct pushd;

/* On a PostgreSQL state_db: starts listening (never waiting on the loop),
 * and connects again whenever the connection breaks. Nothing on SQLite. */
void bus_start(struct pushd *pd);
void bus_stop(struct pushd *pd);
/* Tells the other nodes payload (JSON, at most PUSHD_NOTIFY_MAX bytes,
 * no secret) on STORE_CHAN_CHANGES, off the loop (dbq.h); a failure is
 * logged. Nothing on SQLite. */
void bus_tell(struct pushd *pd, const char *payload);

#endif
