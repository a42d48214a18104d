/* node: this pushd among the nodes that share the state (node_name). */
#ifndef POSTERN_PUSHD_NODE_H
#define POSTERN_PUSHD_NODE_H

struct pushd;

/* At start: the node's own push rows, and those of nodes gone, cleaned
 * up (none of another live node's); the node alive from now on, said
 * every STORE_NODE_BEAT seconds. */
void node_start(struct pushd *pd);
/* At stop, before dbq_stop: the heartbeat ends and the node's row goes
 * (on the database thread). */
void node_stop(struct pushd *pd);

#endif
