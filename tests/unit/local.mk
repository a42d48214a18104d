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
UNIT_TESTS += tests/unit/test_login
tests_unit_test_login_LDADD = $(UNIT_LIBS)
# These open a whole struct app through tests/unit/testapp.h.
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
# The fuzz target for pushd's FastCGI codec replays its corpus (see the
# file for running it under libFuzzer).
UNIT_TESTS += tests/fuzz/fuzz_fcgirec
tests_fuzz_fuzz_fcgirec_SOURCES = tests/fuzz/fuzz_fcgirec.c tests/fuzz/replay.h
tests_fuzz_fuzz_fcgirec_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_fuzz_fuzz_fcgirec_LDADD = pushd/libpushd.a $(UNIT_LIBS)
EXTRA_DIST += tests/fuzz/corpus
UNIT_TESTS += tests/unit/test_sse
tests_unit_test_sse_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_unit_test_sse_LDADD = pushd/libpushd.a $(UNIT_LIBS)
# The fuzz target for pushd's event-stream reader replays its corpus.
UNIT_TESTS += tests/fuzz/fuzz_sse
tests_fuzz_fuzz_sse_SOURCES = tests/fuzz/fuzz_sse.c tests/fuzz/replay.h
tests_fuzz_fuzz_sse_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/pushd
tests_fuzz_fuzz_sse_LDADD = pushd/libpushd.a $(UNIT_LIBS)
# The app's settings (issue 5): check and storage per account.
UNIT_TESTS += tests/unit/test_settings
tests_unit_test_settings_SOURCES = tests/unit/test_settings.c tests/unit/testapp.h
tests_unit_test_settings_LDADD = $(UNIT_LIBS)
# postern-admin's commands over a real state database.
UNIT_TESTS += tests/unit/test_admin
tests_unit_test_admin_SOURCES = tests/unit/test_admin.c tests/unit/testapp.h
tests_unit_test_admin_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/admin
tests_unit_test_admin_LDADD = admin/libadmin.a $(UNIT_LIBS)
