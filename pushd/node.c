/* node: this pushd among the nodes that share the state. Each says it is
 * alive in the nodes table every STORE_NODE_BEAT seconds; a pushd that
 * starts cleans up only its own rows and those of nodes not seen for
 * STORE_NODE_GONE seconds, so that a node starting or stopping never ends
 * another live node's channels (store_push_startup). */
#include "node.h"

#include <time.h>

#include "log.h"
#include "pushd.h"
#include "store.h"

static void node_beat(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);

	/* Missed beats are harmless until STORE_NODE_GONE: logged, and the
	 * next one tries again (the store reconnects by itself). */
	if (store_node_beat(pd->app.store, (long long)time(NULL), 0) == -1)
		log_warn("pushd: node %s: the heartbeat was not written",
		    pd->app.cfg.node_name);
	ev_timer_set(ev, t, STORE_NODE_BEAT * 1000);
}

void node_start(struct pushd *pd)
{
	ev_timer_init(&pd->node_timer, node_beat);
	if (store_push_startup(pd->app.store, (long long)time(NULL)) == -1)
		log_warn("pushd: node %s: start-up could not clean up the push "
		    "rows", pd->app.cfg.node_name);
	ev_timer_set(&pd->ev, &pd->node_timer, STORE_NODE_BEAT * 1000);
}

void node_stop(struct pushd *pd)
{
	ev_timer_stop(&pd->ev, &pd->node_timer);
	if (pd->app.store && store_node_leave(pd->app.store) == -1)
		log_warn("pushd: node %s: its row was not removed",
		    pd->app.cfg.node_name);
}
