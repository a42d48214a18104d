/* mcurl: pushd's transport. libcurl's multi interface driven by pushd's
 * own loop, through CURLMOPT_SOCKETFUNCTION and CURLMOPT_TIMERFUNCTION;
 * the three kinds of request pushd makes of the mail server, and the one
 * it makes of a browser's push service, are set up here, and nowhere
 * else. No call blocks: a request is started and its
 * job's done callback runs when it ends. (Lifetime: pushd.h.) */
#ifndef POSTERN_MCURL_H
#define POSTERN_MCURL_H

#include <curl/curl.h>

struct pushd;

struct mc_job {
	CURL *easy;                  /* NULL when no transfer runs */
	void (*done)(struct mc_job *job, CURLcode rc, long status);
	/* MC_STREAM: the response head is in (status, Content-Type or
	 * NULL); called from inside libcurl. */
	void (*head)(struct mc_job *job, long status, const char *type);
	/* When done runs: the answer's Retry-After in seconds, or 0. */
	curl_off_t retry_after;
};

enum mc_kind {
	MC_CALL,       /* a JMAP API call: the JSON body POSTed */
	MC_STREAM,     /* an event stream: GET, no overall deadline, a stall
	                  limit, the head reported */
	MC_SESSION,    /* the session resource: GET, redirects followed,
	                  the answer discarded */
	MC_PUSH,       /* a Web Push message: body and headers POSTed over
	                  https only, to a public address only (checked on
	                  the address libcurl connects to, so a name cannot
	                  resolve elsewhere later), no credentials, no
	                  redirect, no proxy */
};

struct mc_req {
	enum mc_kind kind;
	const char *url;
	const char *user, *pass;     /* HTTP Basic */
	const char *json;            /* MC_CALL's body (copied) */
	const void *body;            /* MC_PUSH's body (copied) and headers */
	size_t body_len;
	struct curl_slist *headers;  /* (kept until done) */
	/* The answer's bytes (not MC_SESSION): short stops the transfer. */
	curl_write_callback write;
	void *ctx;                   /* write's */
};

int mc_init(struct pushd *pd);
void mc_free(struct pushd *pd);
/* Starts the request rq with job: 0 (done will run), or -1. */
int mc_request(struct pushd *pd, struct mc_job *job, const struct mc_req *rq);
/* Stops a transfer in flight without calling done. */
void mc_cancel(struct pushd *pd, struct mc_job *job);

#endif
