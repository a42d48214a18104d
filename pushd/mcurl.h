/* mcurl: libcurl's multi interface driven by pushd's own loop, through
 * CURLMOPT_SOCKETFUNCTION and CURLMOPT_TIMERFUNCTION. No call blocks: a
 * transfer is started and its job's done callback runs when it ends. */
#ifndef POSTERN_MCURL_H
#define POSTERN_MCURL_H

#include <curl/curl.h>

struct pushd;

struct mc_job {
	CURL *easy;                  /* NULL when no transfer runs */
	void (*done)(struct mc_job *job, CURLcode rc, long status);
};

int mc_init(struct pushd *pd);
void mc_free(struct pushd *pd);
/* A new easy handle with pushd's defaults (protocols, timeouts, CA,
 * no signals), or NULL. */
CURL *mc_easy(struct pushd *pd);
/* Starts job->easy: 0, or -1 (the handle is then freed). */
int mc_start(struct pushd *pd, struct mc_job *job);
/* Stops a transfer in flight without calling done. */
void mc_cancel(struct pushd *pd, struct mc_job *job);

#endif
