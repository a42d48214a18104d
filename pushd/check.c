#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "mcurl.h"
#include "pushd.h"
#include "upstream.h"

struct check {
	struct mc_job job;
	struct check *next;
	struct check_set *set;
	char sess_id[SESS_ID_LEN + 1];
};

static void check_done(struct mc_job *job, CURLcode rc, long status)
{
	struct check *c = container_of(job, struct check, job);
	struct check_set *set = c->set;
	struct check **pp;

	if (set->stopped)
		return;     /* check_free_all frees it */
	for (pp = &set->head; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	if (rc == CURLE_OK && status >= 200 && status < 300)
		set->verdict(set, c->sess_id, 0);
	else if (rc == CURLE_OK && (status == 401 || status == 403))
		set->verdict(set, c->sess_id, 1);
	else
		log_warn("pushd: a session check failed (%s, HTTP %ld)",
		    rc == CURLE_OK ? "answered" : curl_easy_strerror(rc), status);
	free(c);
}

void check_start(struct check_set *set, const struct sess *s)
{
	const struct cfg *cf = &set->pd->app.cfg;
	struct mc_req rq = { .kind = MC_SESSION, .user = s->user, .pass = s->pass };
	struct check *c;
	char *url;
	int rc = -1;

	/* One question at a time per session: more streams opened with the
	 * same cookie meanwhile wait for its answer (a refused password asked
	 * again and again would count failed logins against the gateway). */
	for (c = set->head; c; c = c->next)
		if (!strcmp(c->sess_id, s->id))
			return;
	c = calloc(1, sizeof(*c));
	url = upstream_join(cf, cf->upstream_session_path);
	if (c && url) {
		c->set = set;
		memcpy(c->sess_id, s->id, sizeof(c->sess_id));
		c->job.done = check_done;
		rq.url = url;
		rc = mc_request(set->pd, &c->job, &rq);
	}
	free(url);
	if (rc == -1) {
		log_err("pushd: cannot set up a session check");
		free(c);
		return;
	}
	c->next = set->head;
	set->head = c;
}

void check_stop_all(struct check_set *set)
{
	struct check *c;

	set->stopped = 1;
	if (!set->pd->in_curl)
		for (c = set->head; c; c = c->next)
			mc_cancel(set->pd, &c->job);
}

void check_free_all(struct check_set *set)
{
	struct check *c;

	while ((c = set->head) != NULL) {
		set->head = c->next;
		mc_cancel(set->pd, &c->job);
		free(c);
	}
}
