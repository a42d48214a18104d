/* bus: what pushd hears from the other nodes through the database. */
#ifndef POSTERN_PUSHD_BUS_H
#define POSTERN_PUSHD_BUS_H

struct pushd;

/* On a PostgreSQL state_db: starts listening (never waiting on the loop),
 * and connects again whenever the connection breaks. Nothing on SQLite. */
void bus_start(struct pushd *pd);
void bus_stop(struct pushd *pd);

#endif
