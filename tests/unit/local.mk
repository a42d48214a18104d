# Unit tests: one cmocka program per module, printing TAP.
UNIT_TESTS += tests/unit/test_buf
tests_unit_test_buf_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_cfg
tests_unit_test_cfg_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_seal
tests_unit_test_seal_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_js
tests_unit_test_js_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_upstream
tests_unit_test_upstream_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_seat
tests_unit_test_seat_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_dav
tests_unit_test_dav_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_msieve
tests_unit_test_msieve_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_store
tests_unit_test_store_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_sesskeep
tests_unit_test_sesskeep_LDADD = $(UNIT_LIBS)
# These open a whole struct app through tests/unit/testapp.h.
UNIT_TESTS += tests/unit/test_login
tests_unit_test_login_SOURCES = tests/unit/test_login.c tests/unit/testapp.h
tests_unit_test_login_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_rate
tests_unit_test_rate_SOURCES = tests/unit/test_rate.c tests/unit/testapp.h
tests_unit_test_rate_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_sess
tests_unit_test_sess_SOURCES = tests/unit/test_sess.c tests/unit/testapp.h
tests_unit_test_sess_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_req
tests_unit_test_req_SOURCES = tests/unit/test_req.c tests/unit/testapp.h
tests_unit_test_req_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_addr
tests_unit_test_addr_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_dispo
tests_unit_test_dispo_LDADD = $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_fcgirec
tests_unit_test_fcgirec_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_fcgirec_LDADD = pushd/libpushd.a $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_ev
tests_unit_test_ev_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_ev_LDADD = pushd/libpushd.a $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_sse
tests_unit_test_sse_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_sse_LDADD = pushd/libpushd.a $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_cap
tests_unit_test_cap_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_cap_LDADD = pushd/libpushd.a $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_acct
tests_unit_test_acct_SOURCES = tests/unit/test_acct.c tests/unit/testapp.h \
    tests/unit/testcallback.h
tests_unit_test_acct_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_acct_LDADD = pushd/libpushd.a $(UNIT_LIBS)
UNIT_TESTS += tests/unit/test_pushtoken
tests_unit_test_pushtoken_SOURCES = tests/unit/test_pushtoken.c \
    tests/unit/testapp.h tests/unit/testcallback.h
tests_unit_test_pushtoken_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_pushtoken_LDADD = pushd/libpushd.a $(UNIT_LIBS)
# Web Push's cryptography: RFC 8291 and RFC 8292.
UNIT_TESTS += tests/unit/test_webpush
tests_unit_test_webpush_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_webpush_LDADD = pushd/libpushd.a $(UNIT_LIBS)
# What a notification says; which push services are allowed.
UNIT_TESTS += tests/unit/test_wpmail
tests_unit_test_wpmail_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_wpmail_LDADD = pushd/libpushd.a $(UNIT_LIBS)
# Fuzz targets (tests/fuzz/README.md): each replays its corpus as a TAP
# test in make check; with --enable-fuzzing they are libFuzzer programs,
# built by make and not run.
FUZZ_TARGETS = tests/fuzz/fuzz_fcgirec tests/fuzz/fuzz_sse tests/fuzz/fuzz_cfg \
	tests/fuzz/fuzz_pct tests/fuzz/fuzz_js tests/fuzz/fuzz_addr \
	tests/fuzz/fuzz_dispo tests/fuzz/fuzz_req tests/fuzz/fuzz_push \
	tests/fuzz/fuzz_url tests/fuzz/fuzz_blob tests/fuzz/fuzz_events \
	tests/fuzz/fuzz_msieve
FUZZ_CFLAGS_ALL = $(AM_CFLAGS) $(FUZZ_CFLAGS)
FUZZ_LDFLAGS_ALL = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
FUZZ_CPPFLAGS_PUSHD = $(AM_CPPFLAGS) -I$(srcdir)/pushd
FUZZ_LIBS_PUSHD = pushd/libpushd.a $(LDADD)
tests_fuzz_fuzz_fcgirec_SOURCES = tests/fuzz/fuzz_fcgirec.c tests/fuzz/replay.h
tests_fuzz_fuzz_fcgirec_CPPFLAGS = $(FUZZ_CPPFLAGS_PUSHD)
tests_fuzz_fuzz_fcgirec_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_fcgirec_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_fcgirec_LDADD = $(FUZZ_LIBS_PUSHD)
tests_fuzz_fuzz_sse_SOURCES = tests/fuzz/fuzz_sse.c tests/fuzz/replay.h
tests_fuzz_fuzz_sse_CPPFLAGS = $(FUZZ_CPPFLAGS_PUSHD)
tests_fuzz_fuzz_sse_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_sse_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_sse_LDADD = $(FUZZ_LIBS_PUSHD)
tests_fuzz_fuzz_cfg_SOURCES = tests/fuzz/fuzz_cfg.c tests/fuzz/replay.h tests/fuzz/lines.h
tests_fuzz_fuzz_cfg_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_cfg_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_cfg_LDADD = $(LDADD)
tests_fuzz_fuzz_pct_SOURCES = tests/fuzz/fuzz_pct.c tests/fuzz/replay.h
tests_fuzz_fuzz_pct_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_pct_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_pct_LDADD = $(LDADD)
tests_fuzz_fuzz_js_SOURCES = tests/fuzz/fuzz_js.c tests/fuzz/replay.h
tests_fuzz_fuzz_js_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_js_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_js_LDADD = $(LDADD)
tests_fuzz_fuzz_addr_SOURCES = tests/fuzz/fuzz_addr.c tests/fuzz/replay.h
tests_fuzz_fuzz_addr_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_addr_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_addr_LDADD = $(LDADD)
tests_fuzz_fuzz_dispo_SOURCES = tests/fuzz/fuzz_dispo.c tests/fuzz/replay.h
tests_fuzz_fuzz_dispo_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_dispo_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_dispo_LDADD = $(LDADD)
tests_fuzz_fuzz_req_SOURCES = tests/fuzz/fuzz_req.c tests/fuzz/replay.h tests/fuzz/lines.h tests/fuzz/fuzzapp.h
tests_fuzz_fuzz_req_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_req_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_req_LDADD = $(LDADD)
tests_fuzz_fuzz_push_SOURCES = tests/fuzz/fuzz_push.c tests/fuzz/replay.h tests/fuzz/fuzzapp.h
tests_fuzz_fuzz_push_CPPFLAGS = $(FUZZ_CPPFLAGS_PUSHD)
tests_fuzz_fuzz_push_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_push_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_push_LDADD = $(FUZZ_LIBS_PUSHD)
tests_fuzz_fuzz_url_SOURCES = tests/fuzz/fuzz_url.c tests/fuzz/replay.h tests/fuzz/lines.h
tests_fuzz_fuzz_url_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_url_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_url_LDADD = $(LDADD)
tests_fuzz_fuzz_blob_SOURCES = tests/fuzz/fuzz_blob.c tests/fuzz/replay.h tests/fuzz/lines.h
tests_fuzz_fuzz_blob_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_blob_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_blob_LDADD = $(LDADD)
tests_fuzz_fuzz_events_SOURCES = tests/fuzz/fuzz_events.c tests/fuzz/replay.h
tests_fuzz_fuzz_events_CPPFLAGS = $(FUZZ_CPPFLAGS_PUSHD)
tests_fuzz_fuzz_events_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_events_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_events_LDADD = $(FUZZ_LIBS_PUSHD)
tests_fuzz_fuzz_msieve_SOURCES = tests/fuzz/fuzz_msieve.c tests/fuzz/replay.h
tests_fuzz_fuzz_msieve_CFLAGS = $(FUZZ_CFLAGS_ALL)
tests_fuzz_fuzz_msieve_LDFLAGS = $(FUZZ_LDFLAGS_ALL)
tests_fuzz_fuzz_msieve_LDADD = $(LDADD)
if FUZZING
noinst_PROGRAMS = $(FUZZ_TARGETS)
else
UNIT_TESTS += $(FUZZ_TARGETS)
endif
EXTRA_DIST += tests/fuzz/README.md scripts/valgrind scripts/valgrind.supp
# The app's settings (issue 5): check and storage per account.
UNIT_TESTS += tests/unit/test_settings
tests_unit_test_settings_SOURCES = tests/unit/test_settings.c tests/unit/testapp.h
tests_unit_test_settings_LDADD = $(UNIT_LIBS)
# postern-admin's commands over a real state database.
UNIT_TESTS += tests/unit/test_admin
tests_unit_test_admin_SOURCES = tests/unit/test_admin.c tests/unit/testapp.h
tests_unit_test_admin_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/admin
tests_unit_test_admin_LDADD = admin/libadmin.a $(UNIT_LIBS)
# Its loopback HTTP server runs in a thread.
tests_unit_test_admin_LDFLAGS = $(AM_LDFLAGS) -pthread
