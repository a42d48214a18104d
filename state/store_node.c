/* store_node: the nodes table, where each node's pushd says it is alive,
 * so that a pushd starting or stopping cleans up only its own rows and
 * those of nodes gone (store_push.c). */
#include "store.h"

#include <stdio.h>

#include "db.h"

static const char sql_beat[] =
    "INSERT INTO nodes(name, started, seen) VALUES(?1, ?2, ?2)"
    " ON CONFLICT(name) DO UPDATE SET seen = excluded.seen";
static const char sql_start[] =
    "INSERT INTO nodes(name, started, seen) VALUES(?1, ?2, ?2)"
    " ON CONFLICT(name) DO UPDATE SET started = excluded.started,"
    " seen = excluded.seen";
static const char sql_leave[] = "DELETE FROM nodes WHERE name = ?1";
static const char sql_seen[] = "SELECT seen FROM nodes WHERE name = ?1";
static const char sql_untab[] =
    "UPDATE push_accounts SET tabs = 0 WHERE node = ?1";
static const char sql_list[] =
    "SELECT name, started, seen FROM nodes ORDER BY name";

void store_set_node(struct store *st, const char *name)
{
	struct db_head *h = db_head(st);

	snprintf(h->node, sizeof(h->node), "%s", name ? name : "");
}

const char *store_node(struct store *st)
{
	return db_head(st)->node;
}

int store_node_beat(struct store *st, long long now, int starting)
{
	struct db_stmt *s = db_stmt(st, starting ? sql_start : sql_beat);

	if (s == NULL || db_text(st, s, 1, store_node(st)) == -1 ||
	    db_int(st, s, 2, now) == -1)
		return -1;
	return db_exec(st, s);
}

int store_node_seen(struct store *st, long long *seen)
{
	struct db_stmt *s = db_stmt(st, sql_seen);
	int rc;

	if (s == NULL || db_text(st, s, 1, store_node(st)) == -1)
		return -1;
	if ((rc = db_step(st, s)) == DB_ROW)
		*seen = db_col_int(st, s, 0);
	db_reset(st, s);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

static int by_node(struct store *st, const char *sql)
{
	struct db_stmt *s = db_stmt(st, sql);

	if (s == NULL || db_text(st, s, 1, store_node(st)) == -1)
		return -1;
	return db_exec(st, s);
}

int store_node_leave(struct store *st)
{
	int rc = by_node(st, sql_untab);

	return by_node(st, sql_leave) == -1 ? -1 : rc;
}

int store_node_list(struct store *st, store_node_fn *fn, void *ctx)
{
	struct db_stmt *s = db_stmt(st, sql_list);
	int rc;

	if (s == NULL)
		return -1;
	while ((rc = db_step(st, s)) == DB_ROW)
		fn(ctx, db_col_text(st, s, 0), db_col_int(st, s, 1),
		    db_col_int(st, s, 2));
	db_reset(st, s);
	return rc == DB_DONE ? 0 : -1;
}
